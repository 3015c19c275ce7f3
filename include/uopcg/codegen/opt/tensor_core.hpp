// A tensor core as the TC opt sees it (tinygrad/codegen/opt/tc.py, TensorCore): D(M×N) = A(M×K) ·
// B(K×N) + C done by `threads` work-items together. Its `opts` say how the N and M axes are split
// by 2 into local and upcast parts, its `swizzle` how each operand's lanes are permuted. A Target
// lists the tensor cores its renderer has; OpenCL has none, the tables below are the other
// renderers' of the snapshot, for targets that declare them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "../../core/dtype.hpp"
#include "../../core/error.hpp"
#include "../../core/text.hpp"

namespace uopcg::codegen::opt {

/// One axis name of a tensor core's shape string: 'l' (local), 'u' (upcast) or 'r' (reduce), and
/// its number among the axes of that kind ("u1" = {'u', 1}).
struct TcAxis {
  char kind = 'u';
  int index = 0;
  friend constexpr bool operator==(const TcAxis&, const TcAxis&) = default;
  constexpr text str() const {
    text t;
    t.append(kind).append(index);
    return t;
  }
};

namespace detail {
/// "u0 l0 l1" -> {u0, l0, l1}.
constexpr std::vector<TcAxis> tc_axes(std::string_view spaced) {
  std::vector<TcAxis> out;
  std::size_t i = 0;
  while (i < spaced.size()) {
    if (spaced[i] == ' ') {
      ++i;
      continue;
    }
    TcAxis a{spaced[i++], 0};
    while (i < spaced.size() && spaced[i] >= '0' && spaced[i] <= '9') a.index = a.index * 10 + (spaced[i++] - '0');
    out.push_back(a);
  }
  return out;
}
constexpr int log2_exact(std::int64_t v) {
  int n = 0;
  while (v > 1) v >>= 1, ++n;
  return n;
}
}  // namespace detail

struct TensorCore {
  std::array<std::int64_t, 3> dims{};                 // N, M, K (note the order)
  std::int64_t threads = 0;                            // work-items of one operation
  std::array<std::int64_t, 3> elements_per_thread{};  // of A, B and C/D
  DType dtype_in = DType::float16, dtype_out = DType::float32;
  std::vector<TcAxis> opts;                            // "u<d>"/"l<d>": upcast/localize dim d (0 = N, 1 = M) by 2
  // per operand (A, B): the (local, upcast, reduce) axis names its lanes come from
  std::array<std::array<std::vector<TcAxis>, 3>, 2> swizzle;

  constexpr std::size_t local_count() const { return count('l'); }
  constexpr std::size_t upcast_count() const { return count('u'); }
  /// The K axis is unrolled by 2 log2(K) times.
  constexpr std::size_t reduce_count() const { return static_cast<std::size_t>(detail::log2_exact(dims[2])); }

  /// The axis names in the order the TC opt creates them: the opts (numbered per kind), then r0....
  constexpr std::vector<TcAxis> base_shape_str() const {
    std::vector<TcAxis> out;
    int u = 0, l = 0;
    for (TcAxis o : opts) out.push_back({o.kind, o.kind == 'u' ? u++ : l++});
    for (std::size_t i = 0; i < reduce_count(); ++i) out.push_back({'r', static_cast<int>(i)});
    return out;
  }
  /// The upcast axes of the WMMA's lanes: r0..., then u0..., all reversed.
  constexpr std::vector<TcAxis> base_upcast_axes() const {
    std::vector<TcAxis> out;
    for (std::size_t i = upcast_count(); i-- > 0;) out.push_back({'u', static_cast<int>(i)});
    for (std::size_t i = reduce_count(); i-- > 0;) out.push_back({'r', static_cast<int>(i)});
    return out;
  }
  /// For each operand, the position in `shape_str` each entry's lanes come from (identity for the
  /// names the swizzle does not move); nullopt (with the missing name in `missing`) when a swizzle
  /// names an axis `shape_str` lacks.
  constexpr std::optional<std::array<std::vector<std::size_t>, 2>> permutes_for_shape_str(
      const std::vector<TcAxis>& shape_str, text* missing = nullptr) const {
    std::vector<TcAxis> fwd;
    for (std::size_t i = 0; i < local_count(); ++i) fwd.push_back({'l', static_cast<int>(i)});
    for (std::size_t i = 0; i < upcast_count(); ++i) fwd.push_back({'u', static_cast<int>(i)});
    for (std::size_t i = 0; i < reduce_count(); ++i) fwd.push_back({'r', static_cast<int>(i)});
    std::array<std::vector<std::size_t>, 2> out;
    for (std::size_t operand = 0; operand < 2; ++operand) {
      std::vector<TcAxis> to;
      for (const auto& part : swizzle[operand]) to.insert(to.end(), part.begin(), part.end());
      for (std::size_t i = 0; i < shape_str.size(); ++i) {
        std::size_t k = 0;
        while (k < fwd.size() && !(fwd[k] == shape_str[i])) ++k;
        if (k == fwd.size() || k >= to.size()) {
          out[operand].push_back(i);
          continue;
        }
        std::size_t j = 0;
        while (j < shape_str.size() && !(shape_str[j] == to[k])) ++j;
        if (j == shape_str.size()) {
          if (missing) *missing = to[k].str();
          return std::nullopt;
        }
        out[operand].push_back(j);
      }
    }
    return out;
  }

  /// The description's consistency (tinygrad's TensorCore.__post_init__): the opts split N·M into
  /// `threads` local and elements_per_thread[2] upcast lanes, and the swizzles cover every axis.
  constexpr void check() const {
    auto bad = [](std::string_view why) {
      text t;
      t.append("TensorCore: ").append(why);
      fail(t.view());
    };
    const std::size_t l = local_count(), u = upcast_count(), r = reduce_count();
    if (dims[2] != (std::int64_t(1) << r)) bad("K is not a power of two");
    if (dims[0] * dims[1] != (std::int64_t(1) << (l + u))) bad("N x M is not local x upcast of the opts");
    if (threads != (std::int64_t(1) << l)) bad("threads is not 2^(local opts)");
    if (elements_per_thread[2] != (std::int64_t(1) << u)) bad("elements_per_thread of C is not 2^(upcast opts)");
    std::size_t d0 = 0, d1 = 0;
    for (TcAxis o : opts) {
      if ((o.kind != 'u' && o.kind != 'l') || (o.index != 0 && o.index != 1)) bad("an opt is not u0, u1, l0 or l1");
      (o.index == 0 ? d0 : d1)++;
    }
    if (dims[0] != (std::int64_t(1) << d0) || dims[1] != (std::int64_t(1) << d1)) bad("the opts do not split N and M");
    for (const auto& s : swizzle)
      if (s[0].size() != l || s[1].size() != u || s[2].size() != r) bad("a swizzle part has the wrong size");
  }

 private:
  constexpr std::size_t count(char kind) const {
    std::size_t n = 0;
    for (TcAxis o : opts) n += o.kind == kind;
    return n;
  }
};

/// The tensor-core tables of tinygrad's renderers (tinygrad/codegen/opt/tc.py).
namespace tensor_cores {

namespace detail {
using uopcg::codegen::opt::detail::tc_axes;
struct dtype_pair {
  DType in, out;
};
constexpr std::vector<TensorCore> family(std::array<std::int64_t, 3> dims, std::int64_t threads,
                                         std::array<std::int64_t, 3> ept, std::string_view opts,
                                         std::array<std::array<std::string_view, 3>, 2> swizzle,
                                         std::vector<dtype_pair> dtypes) {
  std::vector<TensorCore> out;
  for (dtype_pair d : dtypes) {
    TensorCore tc;
    tc.dims = dims;
    tc.threads = threads;
    tc.elements_per_thread = ept;
    tc.dtype_in = d.in;
    tc.dtype_out = d.out;
    tc.opts = tc_axes(opts);
    for (std::size_t o = 0; o < 2; ++o)
      for (std::size_t p = 0; p < 3; ++p) tc.swizzle[o][p] = tc_axes(swizzle[o][p]);
    out.push_back(std::move(tc));
  }
  return out;
}
constexpr std::vector<TensorCore> join(std::vector<TensorCore> a, const std::vector<TensorCore>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
// the dtype pairs of the tables below, one spelling each
constexpr DType f16 = DType::float16, bf16 = DType::bfloat16, f32 = DType::float32, e4m3 = DType::fp8e4m3,
                e5m2 = DType::fp8e5m2, i8 = DType::int8, i32 = DType::int32;
inline constexpr std::string_view cuda_opts = "u0 l0 l0 l1 l1 l1 u1";
}  // namespace detail

/// Apple Metal (Apple7 and later): 8x8x8, 32 threads.
constexpr std::vector<TensorCore> metal() {
  using namespace detail;
  return family({8, 8, 8}, 32, {2, 2, 2}, "u0 l0 l1 l1 l0 l1",
                {{{"r1 l1 l2 r2 l4", "r0", "u0 l0 l3"}, {"l0 r0 r1 l3 r2", "u0", "l1 l2 l4"}}},
                {{f32, f32}, {f16, f32}, {f16, f16}, {bf16, f32}, {bf16, bf16}});
}
/// CUDA sm_75: 8x16x8 half.
constexpr std::vector<TensorCore> cuda_sm75() {
  using namespace detail;
  return family({8, 16, 8}, 32, {4, 2, 4}, cuda_opts, {{{"r1 r2 l2 l3 l4", "r0 u1", "l0 l1 u0"}, {"r1 r2 u0 l0 l1", "u1 r0", "l2 l3 l4"}}},
                {{f16, f32}, {f16, f16}});
}
/// CUDA sm_80: 8x16x16 (half, bf16), 8x16x8 half, and tf32 (used only with ALLOW_TF32).
constexpr std::vector<TensorCore> cuda_sm80() {
  using namespace detail;
  auto m16 = family({8, 16, 16}, 32, {8, 4, 4}, cuda_opts,
                    {{{"r1 r2 l2 l3 l4", "u1 r3", "l0 l1 u0 r0"}, {"r1 r2 u0 l0 l1", "r0 r3", "l2 l3 l4 u1"}}},
                    {{f16, f32}, {bf16, f32}, {f16, f16}});
  auto tf32 = family({8, 16, 8}, 32, {4, 2, 4}, cuda_opts,
                     {{{"r0 r1 l2 l3 l4", "u1 r2", "l0 l1 u0"}, {"r0 r1 u0 l0 l1", "u1 r2", "l2 l3 l4"}}}, {{f32, f32}});
  return join(join(std::move(m16), cuda_sm75()), tf32);
}
/// CUDA sm_89: sm_80 plus 8x16x32 fp8.
constexpr std::vector<TensorCore> cuda_sm89() {
  using namespace detail;
  return join(cuda_sm80(), family({8, 16, 32}, 32, {16, 8, 4}, cuda_opts,
                                  {{{"r2 r3 l2 l3 l4", "u1 r4", "l0 l1 u0 r0 r1"}, {"r2 r3 u0 l0 l1", "r1 r4", "l2 l3 l4 u1 r0"}}},
                                  {{e4m3, f32}, {e5m2, f32}}));
}
/// AMD RDNA3: 16x16x16, 32 threads.
constexpr std::vector<TensorCore> amd_rdna3() {
  using namespace detail;
  return family({16, 16, 16}, 32, {16, 16, 8}, "l0 l0 l0 l0 l1 u1 u1 u1",
                {{{"l4 u0 u1 u2 l0", "r1 r2 r3", "l1 l2 l3 r0"}, {"l0 l1 l2 l3 l4", "r1 r2 r3", "u0 u1 u2 r0"}}},
                {{f16, f32}, {f16, f16}, {bf16, f32}, {i8, i32}});
}
/// AMD RDNA4: 16x16x16, 32 threads.
constexpr std::vector<TensorCore> amd_rdna4() {
  using namespace detail;
  return family({16, 16, 16}, 32, {8, 8, 8}, "l0 l0 l0 l0 u1 u1 u1 l1",
                {{{"u0 u1 u2 l4 r2", "r0 r1 r3", "l0 l1 l2 l3"}, {"l0 l1 l2 l3 r2", "r0 r1 r3", "l4 u0 u1 u2"}}},
                {{f16, f32}, {f16, f16}, {bf16, f32}, {bf16, bf16}});
}
namespace detail {
inline constexpr std::string_view cdna_opts = "l0 l0 l0 l0 u1 u1 l1 l1";
constexpr std::vector<TensorCore> cdna_161616() {
  return family({16, 16, 16}, 64, {4, 4, 4}, cdna_opts,
                {{{"u0 u1 l4 l5 r2 r3", "r0 r1", "l0 l1 l2 l3"}, {"l0 l1 l2 l3 r2 r3", "r0 r1", "l4 l5 u0 u1"}}},
                {{f16, f32}, {bf16, f32}});
}
constexpr std::vector<TensorCore> cdna_161632() {
  return family({16, 16, 32}, 64, {8, 8, 4}, cdna_opts,
                {{{"u0 u1 l4 l5 r3 r4", "r0 r1", "l0 l1 l2 l3 r2"}, {"l0 l1 l2 l3 r3 r4", "r0 r1", "l4 l5 u0 u1 r2"}}},
                {{e5m2, f32}, {e4m3, f32}, {f16, f32}, {bf16, f32}});
}
constexpr std::vector<TensorCore> cdna_1616128() {
  return family({16, 16, 128}, 64, {32, 32, 4}, cdna_opts,
                {{{"u0 u1 l4 l5 r5 r6", "r0 r1", "l0 l1 l2 l3 r2 r3 r4"}, {"l0 l1 l2 l3 r5 r6", "r0 r1", "l4 l5 u0 u1 r2 r3 r4"}}},
                {{e5m2, f32}, {e4m3, f32}});
}
}  // namespace detail
/// AMD CDNA3 (gfx942): the two fp8 16x16x32 cores, then 16x16x16.
constexpr std::vector<TensorCore> amd_cdna3() {
  auto fp8 = detail::cdna_161632();
  fp8.resize(2);
  return detail::join(std::move(fp8), detail::cdna_161616());
}
/// AMD CDNA4 (gfx950): 16x16x128, 16x16x32, 16x16x16.
constexpr std::vector<TensorCore> amd_cdna4() {
  return detail::join(detail::join(detail::cdna_1616128(), detail::cdna_161632()), detail::cdna_161616());
}

}  // namespace tensor_cores

}  // namespace uopcg::codegen::opt
