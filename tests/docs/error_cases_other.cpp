// docs/errors.md's cases: nax::jit, files, threads, random numbers, optimizers and the rest
// (error_cases.hpp).
#include "error_cases.hpp"

namespace error_cases {

void add_other_cases(case_map& c) {
  // nax::jit.
  c["jit-binding"] = [] {
    auto add = nax::jit([](auto a, auto b) { return a + b; }, nax::input<float, batch, hidden>("a"),
                        nax::input<float, batch, hidden>("b"));
    nax::tensor<float, batch, hidden> a(batch{3}), b(batch{4});
    (void)add(a, b);
  };
  c["jit-options"] = [] {
    (void)nax::jit({.max_specializations = 0}, dense, nax::input<float, batch, hidden>("x"),
                   nax::input<float, hidden, k_ax>("w"));
  };
  c["jit-concat-dynamic"] = [] {
    (void)nax::jit([](auto x, auto y) { return nax::concat<seq>(x, y); },
                   nax::input<float, seq, hidden>("x"),
                   nax::input<float, nax::axis<"seq", 1>, hidden>("y"));
  };
  c["jit-nan"] = [] {
    auto f = nax::jit(dense, nax::input<float, batch, hidden>("x"),
                      nax::input<float, hidden, k_ax>("w"));
    nax::tensor<float, batch, hidden> x(batch{2});
    nax::tensor<float, hidden, k_ax> w(k_ax{3});
    x.fill(1);
    w.fill(0.25f);
    x(1, 3) = nan;
    const nax::tensor<float, batch, k_ax> y = f(x, w);
    for (std::size_t j = 0; j < 3; ++j) {
      CHECK(y(0, j) == 1);
      CHECK(std::isnan(y(1, j)));  // relu(NaN) is NaN
    }
  };
  c["jit-empty"] = [] {
    auto f = nax::jit(dense, nax::input<float, batch, hidden>("x"),
                      nax::input<float, hidden, k_ax>("w"));
    nax::tensor<float, batch, hidden> x(batch{0});
    nax::tensor<float, hidden, k_ax> w(k_ax{3});
    w.fill(1);
    CHECK(f(x, w).size() == 0);
    nax::tensor<float, hidden, k_ax> none(k_ax{0});
    nax::tensor<float, batch, hidden> x2(batch{2});
    x2.fill(1);
    CHECK(f(x2, none).size() == 0);
  };

  // Files.
  c["npy-missing"] = [] {
    current_file = temp_file("missing.npy");
    (void)nax::io::load_npy(current_file);
  };
  c["npy-magic"] = [] {
    current_file = temp_file("magic.npy");
    write_bytes(current_file, "PK\x03\x04 a zip file, not a .npy file");
    (void)nax::io::load_npy(current_file);
  };
  c["npy-truncated"] = [] {
    current_file = temp_file("truncated.npy");
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000,), }";
    header += '\n';
    std::string file = "\x93NUMPY";
    file += '\x01';
    file += '\x00';
    file += static_cast<char>(header.size());
    file += '\x00';
    write_bytes(current_file, file + header);
    (void)nax::io::load_npy(current_file);
  };
  c["npy-dtype"] = [] {
    current_file = temp_file("dtype.npy");
    nax::io::save_npy(current_file, nax::tensor<float, batch, hidden>(batch{2}));
    (void)nax::io::load_npy<double, batch, hidden>(current_file);
  };
  c["npy-rank"] = [] {
    current_file = temp_file("rank.npy");
    nax::io::save_npy(current_file, nax::tensor<float, batch, hidden>(batch{2}));
    (void)nax::io::load_npy<float, batch>(current_file);
  };
  c["npy-extent"] = [] {
    current_file = temp_file("extent.npy");
    nax::io::save_npy(current_file, nax::tensor<float, batch, k_ax>(batch{2}, k_ax{5}));
    (void)nax::io::load_npy<float, batch, hidden>(current_file);
  };
  c["npy-bound"] = [] {
    current_file = temp_file("bound.npy");
    nax::io::save_npy(current_file, nax::tensor<float, batch, hidden>(batch{600}));
    (void)nax::io::load_npy<float, seq, hidden>(current_file);
  };
  c["npz-entry"] = [] {
    current_file = temp_file("entry.npz");
    nax::tensor<float, hidden> w;
    nax::io::save_npz(current_file, {{"w", nax::io::to_dyn(w)}, {"b", nax::io::to_dyn(w)}});
    (void)nax::io::load_npz<float, hidden>(current_file, "w3");
  };
  c["npz-duplicate"] = [] {
    current_file = temp_file("duplicate.npz");
    nax::tensor<float, hidden> w;
    nax::io::save_npz(current_file, {{"w", nax::io::to_dyn(w)}, {"w", nax::io::to_dyn(w)}});
  };
  c["npy-nan-empty"] = [] {
    current_file = temp_file("values.npy");
    nax::tensor<float, batch, hidden> x(batch{1});
    x.fill(nan);
    x(0, 1) = inf;
    nax::io::save_npy(current_file, x);
    const auto y = nax::io::load_npy<float, batch, hidden>(current_file);
    CHECK(std::isnan(y(0, 0)));
    CHECK(y(0, 1) == inf);
    nax::io::save_npy(current_file, nax::tensor<float, batch, hidden>(batch{0}));
    CHECK(nax::io::load_npy<float, batch, hidden>(current_file).size() == 0);
  };

  // Threads, random numbers, optimizers, graphs of nodes.
  c["threads-count"] = [] { nax::set_num_threads(0); };
  c["random-range"] = [] { (void)nax::uniform<float, hidden>(1, 2.0, 1.0); };
  c["optim-shape"] = [] {
    nax::tensor<float, k_ax> w(k_ax{4}), grad(k_ax{5});
    w.fill(0);
    grad.fill(0);
    const nax::optim::adamw opt{};
    auto state = opt.init(w);
    opt.step(w, grad, state);
  };
  c["dynamic-slice-size"] = [] {
    const nax::tensor<float, seq, hidden> x(seq{5});
    (void)nax::dynamic_slice<seq, 6>(x, 0);
  };
  c["dynamic-update-size"] = [] {
    const nax::tensor<float, seq, hidden> x(seq{5}), update(seq{6});
    (void)nax::dynamic_update_slice<seq>(x, update, 0);
  };
  c["set-size-bound"] = [] {
    const nax::tensor<float, seq, hidden> x(seq{5});
    (void)nax::set_dimension_size<seq, nax::axis<"n">>(x, 600);
  };
  c["optim-fields-shape"] = [] {
    net w = make_net(2), grad = make_net(2);
    grad.layers[1].w = nax::tensor<float, k_ax>(k_ax{5});
    const nax::optim::adamw opt{};
    auto state = opt.init(w);
    opt.step(w, grad, state);
  };
  c["optim-fields-size"] = [] {
    net w = make_net(2);
    const net grad = make_net(1);
    const nax::optim::adamw opt{};
    auto state = opt.init(w);
    opt.step(w, grad, state);
  };
  c["jit-fields-size"] = [] {
    auto f = nax::jit([](const auto& p) { return nax::sum<k_ax>(p.layers[0].w + p.layers[1].w); },
                      nax::input(make_net(2)));
    (void)f(make_net(3));
  };
  c["npz-fields-missing"] = [] {
    current_file = temp_file("fields_missing.npz");
    nax::save_npz(current_file, make_net(2));
    net more = make_net(3);
    nax::load_npz(current_file, more);
  };
  c["npz-fields-extra"] = [] {
    current_file = temp_file("fields_extra.npz");
    nax::save_npz(current_file, make_net(2));
    net fewer = make_net(1);
    nax::load_npz(current_file, fewer);
  };
  c["safetensors-entry"] = [] {
    current_file = temp_file("entry.safetensors");
    nax::tensor<float, hidden> w;
    nax::io::save_safetensors(current_file, {{"w", nax::io::to_dyn(w)}, {"b", nax::io::to_dyn(w)}});
    (void)nax::load_safetensors(current_file).get("wte");
  };
  c["safetensors-dtype"] = [] {
    current_file = temp_file("dtype.safetensors");
    std::string header = R"({"a": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}})";
    std::ofstream f(current_file, std::ios::binary | std::ios::trunc);
    for (int i = 0; i < 8; ++i) f.put(static_cast<char>(i == 0 ? header.size() : 0));
    f << header << std::string(4, '\0');
    f.close();
    (void)nax::load_safetensors(current_file);
  };
  c["safetensors-fields-missing"] = [] {
    current_file = temp_file("fields_missing.safetensors");
    nax::save_safetensors(current_file, make_net(2));
    net n = make_net(2);
    nax::load_safetensors(current_file, n,
                          {.names = {{"layers.0.w", "h.0.w"}}, .ignore_extra = false});
  };
  c["safetensors-fields-extra"] = [] {
    current_file = temp_file("fields_extra.safetensors");
    nax::save_safetensors(current_file, make_net(2));
    net fewer = make_net(1);
    nax::load_safetensors(current_file, fewer);
  };
  c["csr-node"] = [] {
    const std::int32_t src[] = {0, 5}, dst[] = {1, 2};
    (void)nax::gnn::csr::from_edges(3, src, dst);
  };
}

}  // namespace error_cases
