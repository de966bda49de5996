// Runs a batch of tessel ops described in JSON, for test_numpy_ops.py and
// test_torch_ops.py:
//   [{"op": "add", "attrs": {...}, "inputs": [{"file": "a.npy",
//     "view": [["permute", [1, 0]], ["slice", 0, 1, 5, 2], ["expand", [..]]]}],
//     "outputs": ["out0.npy", ...]}, ...]
// Views are applied to the loaded tensor, so tessel sees the same strided,
// broadcast (stride 0) layouts as NumPy. An op that throws writes
// "<output>.error" holding the error code instead.
#include <fstream>
#include <iostream>

#include "op_tool.hpp"

using namespace tessel;
using op_tool::Json;
using op_tool::Op;

namespace {

Tensor apply_view(Tensor t, const Json& steps) {
  for (const auto& s : steps) {
    const std::string kind = s[0];
    if (kind == "permute") {
      const auto perm = s[1].get<std::vector<std::int64_t>>();
      t = t.permute(std::span<const std::int64_t>(perm));
    } else if (kind == "slice") {
      t = t.slice(s[1].get<std::int64_t>(), s[2].get<std::int64_t>(),
                  s[3].get<std::int64_t>(), s[4].get<std::int64_t>());
    } else if (kind == "expand") {
      t = t.expand(Shape(s[1].get<std::vector<std::int64_t>>()));
    } else if (kind == "cast") {
      t = t.to(parse_dtype(s[1].get<std::string>()));
    } else {
      throw std::runtime_error("unknown view step " + kind);
    }
  }
  return t;
}

Axes axes(const Json& a) {
  if (!a.contains("axes")) return {};
  const auto v = a["axes"].get<std::vector<std::int64_t>>();
  return Axes(v.begin(), v.end());
}

std::vector<Tensor> one(Tensor t) { return {std::move(t)}; }

std::map<std::string, Op> registry() {
  std::map<std::string, Op> m;
  // Every row of the element-wise tables under its own name; the rows
  // with parameters are replaced below by entries that read them.
  for (int i = 0; i < kUnaryOpCount; ++i) {
    const auto op = static_cast<UnaryOp>(i);
    m[op_info(op).name] = [op](const auto& in, const Json&) {
      return one(unary(op, in[0], default_params(op)));
    };
  }
  for (int i = 0; i < kBinaryOpCount; ++i) {
    const auto op = static_cast<BinaryOp>(i);
    m[op_info(op).name] = [op](const auto& in, const Json&) {
      return one(binary(op, in[0], in[1]));
    };
  }
  m["gelu"] = [](const auto& in, const Json& a) {
    return one(gelu(in[0], a.value("tanh", false) ? GeluApproximation::Tanh
                                                  : GeluApproximation::None));
  };
  m["leaky_relu"] = [](const auto& in, const Json& a) {
    return one(leaky_relu(in[0], a.value("alpha", 0.01)));
  };
  m["elu"] = [](const auto& in, const Json& a) {
    return one(elu(in[0], a.value("alpha", 1.0)));
  };
  m["add_scalar"] = [](const auto& in, const Json& a) {
    return one(add(in[0], Scalar(a["value"].get<double>())));
  };
  m["where"] = [](const auto& in, const Json&) {
    return one(where(in[0], in[1], in[2]));
  };
  m["clip"] = [](const auto& in, const Json& a) {
    return one(clip(in[0], Scalar(a["min"].get<double>()),
                    Scalar(a["max"].get<double>())));
  };
#define REDUCE(name)                                              \
  m[#name] = [](const auto& in, const Json& a) {                  \
    return one(name(in[0], axes(a), a.value("keepdims", false))); \
  }
  REDUCE(sum);
  REDUCE(mean);
  REDUCE(prod);
  REDUCE(max);
  REDUCE(min);
  REDUCE(any);
  REDUCE(all);
  REDUCE(logsumexp);
  REDUCE(sum_squares);
#undef REDUCE
  m["var"] = [](const auto& in, const Json& a) {
    return one(var(in[0], axes(a), a.value("correction", 1.0),
                   a.value("keepdims", false)));
  };
  m["std"] = [](const auto& in, const Json& a) {
    return one(tessel::std(in[0], axes(a), a.value("correction", 1.0),
                           a.value("keepdims", false)));
  };
  m["norm"] = [](const auto& in, const Json& a) {
    return one(norm(in[0], a["ord"].get<double>(), axes(a),
                    a.value("keepdims", false)));
  };
  m["argmax"] = [](const auto& in, const Json& a) {
    return one(argmax(in[0], a["axis"].get<std::int64_t>(),
                      a.value("keepdims", false)));
  };
  m["argmin"] = [](const auto& in, const Json& a) {
    return one(argmin(in[0], a["axis"].get<std::int64_t>(),
                      a.value("keepdims", false)));
  };
  m["cumsum"] = [](const auto& in, const Json& a) {
    return one(cumsum(in[0], a["axis"]));
  };
  m["cumprod"] = [](const auto& in, const Json& a) {
    return one(cumprod(in[0], a["axis"]));
  };
  m["softmax"] = [](const auto& in, const Json& a) {
    return one(softmax(in[0], a["axis"]));
  };
  m["log_softmax"] = [](const auto& in, const Json& a) {
    return one(log_softmax(in[0], a["axis"]));
  };
  m["concat"] = [](const auto& in, const Json& a) {
    return one(concat(in, a["axis"]));
  };
  m["stack"] = [](const auto& in, const Json& a) {
    return one(stack(in, a["axis"]));
  };
  m["take"] = [](const auto& in, const Json& a) {
    return one(gather(in[0], in[1], a["axis"]));
  };
  m["take_along_axis"] = [](const auto& in, const Json& a) {
    return one(take_along_axis(in[0], in[1], a["axis"]));
  };
  m["flip"] = [](const auto& in, const Json& a) {
    return one(flip(in[0], axes(a)));
  };
  m["roll"] = [](const auto& in, const Json& a) {
    return one(
        roll(in[0], a["shifts"].get<std::vector<std::int64_t>>(), axes(a)));
  };
  m["tile"] = [](const auto& in, const Json& a) {
    return one(tile(in[0], a["reps"].get<std::vector<std::int64_t>>()));
  };
  m["repeat"] = [](const auto& in, const Json& a) {
    return one(repeat(in[0], a["repeats"].get<std::int64_t>(),
                      a["axis"].get<std::int64_t>()));
  };
  m["pad"] = [](const auto& in, const Json& a) {
    std::vector<std::pair<std::int64_t, std::int64_t>> pads;
    for (const auto& p : a["pads"]) pads.emplace_back(p[0], p[1]);
    const std::string mode = a["mode"];
    const PadMode pm = mode == "reflect" ? PadMode::Reflect
                       : mode == "edge"  ? PadMode::Edge
                       : mode == "wrap"  ? PadMode::Wrap
                                         : PadMode::Constant;
    return one(pad(in[0], pads, pm, Scalar(a.value("value", 0.0))));
  };
  m["tril"] = [](const auto& in, const Json& a) {
    return one(tril(in[0], a["k"]));
  };
  m["triu"] = [](const auto& in, const Json& a) {
    return one(triu(in[0], a["k"]));
  };
  m["sort"] = [](const auto& in, const Json& a) {
    return one(sort(in[0], a["axis"], a.value("descending", false)));
  };
  m["argsort"] = [](const auto& in, const Json& a) {
    return one(argsort(in[0], a["axis"], a.value("descending", false)));
  };
  m["cast"] = [](const auto& in, const Json& a) {
    return one(in[0].to(parse_dtype(a["dtype"].get<std::string>())));
  };
  m["contiguous"] = [](const auto& in, const Json&) {
    return one(in[0].contiguous());
  };
  op_tool::add_nn_ops(m);
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: op_tool BATCH.json\n";
    return 2;
  }
  Json batch;
  std::ifstream(argv[1]) >> batch;
  const auto ops = registry();
  for (const auto& c : batch) {
    const auto& op = ops.at(c["op"].get<std::string>());
    std::vector<Tensor> inputs;
    for (const auto& in : c["inputs"]) {
      inputs.push_back(apply_view(load_npy(in["file"].get<std::string>()),
                                  in.value("view", Json::array())));
    }
    const auto outs = c["outputs"].get<std::vector<std::string>>();
    try {
      const auto results = op(inputs, c.value("attrs", Json::object()));
      for (std::size_t i = 0; i < outs.size(); ++i) {
        // NumPy has no bf16/f8: those are written as their f32 values.
        const Tensor r = is_floating_point(results[i].dtype()) &&
                                 results[i].dtype() != DType::F16 &&
                                 results[i].dtype() != DType::F64
                             ? results[i].to(DType::F32)
                             : results[i];
        save_npy(outs[i], r);
      }
    } catch (const Error& e) {
      std::ofstream(outs.at(0) + ".error") << e.code() << " " << e.what();
    }
  }
  return 0;
}
