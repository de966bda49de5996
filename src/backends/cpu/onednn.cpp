#include "backends/cpu/onednn.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <list>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>

#include "tessel/core/parallel.hpp"

namespace tessel::cpu::onednn {

namespace {

using dt = dnnl::memory::data_type;

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::stream& stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

bool to_dnnl(DType t, dt* out) {
  switch (t) {
    case DType::F32: *out = dt::f32; return true;
    case DType::BF16: *out = dt::bf16; return true;
    case DType::F16: *out = dt::f16; return true;
    case DType::I8: *out = dt::s8; return true;
    case DType::U8: *out = dt::u8; return true;
    case DType::I32: *out = dt::s32; return true;
    default: return false;
  }
}

dnnl::memory::desc describe_tensor(const Tensor& t, dt type) {
  dnnl::memory::dims dims(t.shape().begin(), t.shape().end());
  dnnl::memory::dims strides(t.strides().begin(), t.strides().end());
  return dnnl::memory::desc(dims, type, strides);
}

std::string key_of(const dnnl::memory::desc& d) {
  std::string k = fmt::format("{}:", static_cast<int>(d.data_type()));
  for (int i = 0; i < d.data.ndims; ++i) {
    k += fmt::format("{}/{},", d.data.dims[i],
                     d.data.format_desc.blocking.strides[i]);
  }
  return k;
}

// A small LRU cache: creating a primitive costs far more than running a
// small one.
class MatmulCache {
 public:
  std::shared_ptr<dnnl::matmul> get(const std::string& key,
                                    const dnnl::memory::desc& a,
                                    const dnnl::memory::desc& b,
                                    const dnnl::memory::desc* bias,
                                    const dnnl::memory::desc& c) {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      return it->second->second;
    }
    std::shared_ptr<dnnl::matmul> prim;
    try {
      const auto desc = bias ? dnnl::matmul::desc(a, b, *bias, c)
                             : dnnl::matmul::desc(a, b, c);
      dnnl::matmul::primitive_desc pd(desc, engine());
      // A reference implementation means these strides or dtypes have no
      // optimised kernel: let the caller lay the data out densely instead.
      if (std::string(pd.impl_info_str()).rfind("ref", 0) != 0) {
        prim = std::make_shared<dnnl::matmul>(pd);
      }
    } catch (const dnnl::error&) {
    }
    order_.emplace_front(key, prim);
    index_[key] = order_.begin();
    if (order_.size() > kCapacity) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return prim;
  }

 private:
  static constexpr std::size_t kCapacity = 512;
  using Entry = std::pair<std::string, std::shared_ptr<dnnl::matmul>>;
  std::mutex mutex_;
  std::list<Entry> order_;
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

MatmulCache& cache() {
  static MatmulCache c;
  return c;
}

const char* isa_name() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::sse41: return "sse41";
    default: return "other";
  }
}

}  // namespace

std::string describe() {
  const auto* v = dnnl_version();
  const char* runtime = v->cpu_runtime == DNNL_RUNTIME_OMP   ? "OpenMP"
                        : v->cpu_runtime == DNNL_RUNTIME_TBB ? "TBB"
                                                             : "sequential";
  return fmt::format("oneDNN {}.{}.{} ({}, {})", v->major, v->minor, v->patch,
                     isa_name(), runtime);
}

void set_threads_for_this_call() {
  const int wanted = in_parallel_region() ? 1 : get_num_threads();
  thread_local int current = -1;
  if (current != wanted) {
    omp_set_num_threads(wanted);
    current = wanted;
  }
}

bool matmul(const Tensor& a, const Tensor& b, const Tensor* bias,
            const Tensor& out) {
  dt ta, tb, tc, tbias = dt::f32;
  if (!to_dnnl(a.dtype(), &ta) || !to_dnnl(b.dtype(), &tb) ||
      !to_dnnl(out.dtype(), &tc) || (bias && !to_dnnl(bias->dtype(), &tbias))) {
    return false;
  }
  const auto da = describe_tensor(a, ta);
  const auto db = describe_tensor(b, tb);
  const auto dc = describe_tensor(out, tc);
  dnnl::memory::desc dbias;
  std::string key = key_of(da) + "|" + key_of(db) + "|" + key_of(dc);
  if (bias) {
    // Bias broadcasts over every axis but the last.
    dnnl::memory::dims dims(out.shape().size(), 1);
    dims.back() = out.shape().back();
    dnnl::memory::dims strides(out.shape().size(), 0);
    strides.back() = bias->strides().back();
    for (std::size_t i = 0; i + 1 < strides.size(); ++i)
      strides[i] = out.shape().back();
    dbias = dnnl::memory::desc(dims, tbias, strides);
    key += "|" + key_of(dbias);
  }
  const auto prim = cache().get(key, da, db, bias ? &dbias : nullptr, dc);
  if (!prim) return false;
  auto& e = engine();
  dnnl::memory ma(da, e, const_cast<void*>(a.raw_data()));
  dnnl::memory mb(db, e, const_cast<void*>(b.raw_data()));
  dnnl::memory mc(dc, e, const_cast<void*>(out.raw_data()));
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}};
  if (bias) {
    args.emplace(DNNL_ARG_BIAS,
                 dnnl::memory(dbias, e, const_cast<void*>(bias->raw_data())));
  }
  set_threads_for_this_call();
  prim->execute(stream(), args);
  stream().wait();
  return true;
}

}  // namespace tessel::cpu::onednn
