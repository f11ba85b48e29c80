// Kernel conformance: warp votes, matches, reductions, shuffles and bit intrinsics
// (conformance/warp.cu).
#include <algorithm>
#include <cstdint>

#include "conformance_support.hpp"

namespace {

using conf::Conformance;
using conf::expect_equal;
using u64 = unsigned long long;

unsigned brev32(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
u64 brev64(u64 x) {
  return (u64{brev32(static_cast<unsigned>(x))} << 32) | brev32(static_cast<unsigned>(x >> 32));
}

unsigned byte_perm(unsigned x, unsigned y, unsigned s) {
  const u64 bytes = (u64{y} << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) {
    const unsigned sel = (s >> (4 * i)) & 7u;
    r |= static_cast<unsigned>((bytes >> (8 * sel)) & 0xffu) << (8 * i);
  }
  return r;
}

unsigned funnel_l(unsigned lo, unsigned hi, unsigned shift) {
  const u64 v = (u64{hi} << 32) | lo;
  return static_cast<unsigned>((v << shift) >> 32);
}
unsigned funnel_r(unsigned lo, unsigned hi, unsigned shift) {
  const u64 v = (u64{hi} << 32) | lo;
  return static_cast<unsigned>(v >> shift);
}

u64 mul_hi64(u64 a, u64 b) {
  const u64 a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
  const u64 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const u64 mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

unsigned absdiff_s(int a, int b) {
  return a < b ? static_cast<unsigned>(b) - static_cast<unsigned>(a)
               : static_cast<unsigned>(a) - static_cast<unsigned>(b);
}
unsigned absdiff_u(unsigned a, unsigned b) { return a < b ? b - a : a - b; }

}  // namespace

TEST_SUITE("conformance") {
  TEST_CASE_FIXTURE(Conformance,
                    "conformance.warp: ballot all any match_any reduce and match_all") {
    const CUfunction f = function(load_ptx("warp"), "warp_votes");
    constexpr std::size_t n = 128;
    conf::Rng rng(40);
    std::vector<unsigned> in(n);
    for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<unsigned>(rng.range(0, 11));
    in[32 + 9] = 1u << 31;  // warp 1: not all below 1000, match_all fails
    for (std::size_t i = 64; i < 96; ++i) in[i] = in[i] == 7u ? 8u : in[i];  // warp 2: no 7
    in[100] = 7u;
    in[101] = 5000u;
    const CUdeviceptr din = upload(in);
    const CUdeviceptr dout = zeros<unsigned>(8 * n);
    run(f, {2}, {64}, 0, din, dout);
    std::vector<unsigned> want(8 * n);
    for (std::size_t w = 0; w < n / 32; ++w) {
      const unsigned* v = &in[w * 32];
      unsigned ballot = 0, sum = 0, mn = ~0u, mx = 0;
      bool all = true, any = false, same_top = true;
      for (unsigned l = 0; l < 32; ++l) {
        ballot |= (v[l] & 1u) << l;
        all = all && v[l] < 1000u;
        any = any || v[l] == 7u;
        sum += v[l];
        mn = std::min(mn, v[l]);
        mx = std::max(mx, v[l]);
        same_top = same_top && (v[l] >> 30) == (v[0] >> 30);
      }
      for (unsigned l = 0; l < 32; ++l) {
        unsigned match = 0;
        for (unsigned k = 0; k < 32; ++k) match |= (v[k] % 4 == v[l] % 4 ? 1u : 0u) << k;
        unsigned* o = &want[8 * (w * 32 + l)];
        o[0] = ballot;
        o[1] = all ? 1 : 0;
        o[2] = any ? 1 : 0;
        o[3] = match;
        o[4] = sum;
        o[5] = mn;
        o[6] = mx;
        o[7] = same_top ? 0xffffffffu ^ 0x5a5a5a5au : 0u;
      }
    }
    expect_equal(download<unsigned>(dout, 8 * n), want, "votes (8 per thread)");
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.warp: votes and reductions in divergent branches") {
    const CUfunction f = function(load_ptx("warp"), "warp_votes_divergent");
    constexpr std::size_t n = 96;
    conf::Rng rng(41);
    std::vector<unsigned> in(n);
    for (unsigned& v : in) v = static_cast<unsigned>(rng.range(0, 100)) * 0x01010101u % 0xfffffu;
    const CUdeviceptr din = upload(in);
    const CUdeviceptr dout = zeros<unsigned>(3 * n);
    run(f, {1}, {96}, 0, din, dout);
    const std::vector<unsigned> got = download<unsigned>(dout, 3 * n);
    std::vector<unsigned> want(3 * n);
    for (std::size_t w = 0; w < n / 32; ++w) {
      unsigned even_ballot = 0, odd_ballot = 0, even_or = 0, odd_xor = 0, odd_and = ~0u;
      for (unsigned l = 0; l < 32; ++l) {
        const unsigned v = in[w * 32 + l];
        if (l % 2 == 0) {
          even_ballot |= (v > 50u ? 1u : 0u) << l;
          even_or |= v;
        } else {
          odd_ballot |= (v > 50u ? 1u : 0u) << l;
          odd_xor ^= v;
          odd_and &= v | 0xf0u;
        }
      }
      for (unsigned l = 0; l < 32; ++l) {
        const std::size_t i = w * 32 + l;
        want[3 * i] = l % 2 == 0 ? even_ballot : odd_ballot;
        want[3 * i + 2] = l % 2 == 0 ? even_or : odd_xor;
        if (l % 2 == 1) {
          want[3 * i + 1] = odd_and;
        } else {
          // __activemask: this lane, and no odd lane (which run the other branch).
          const unsigned mask = got[3 * i + 1];
          const bool plausible = (mask & (1u << l)) != 0 && (mask & 0xaaaaaaaau) == 0;
          want[3 * i + 1] = plausible ? mask : 0x55555555u;
        }
      }
    }
    expect_equal(got, want, "divergent votes (3 per thread)");
  }

  TEST_CASE_FIXTURE(Conformance, "conformance.warp: shuffles with widths and of doubles") {
    const CUfunction f = function(load_ptx("warp"), "warp_shuffles");
    constexpr std::size_t n = 128;
    std::vector<int> in(n);
    for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<int>(i * 7919 % 1000) - 500;
    const CUdeviceptr din = upload(in);
    const CUdeviceptr dout = zeros<int>(5 * n);
    const CUdeviceptr ddout = zeros<double>(n);
    run(f, {2}, {64}, 0, din, dout, ddout);
    std::vector<int> want(5 * n);
    std::vector<double> dwant(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t base = i / 32 * 32;
      const std::size_t l = i % 32;
      const auto v = [&](std::size_t lane) { return in[base + lane]; };
      want[5 * i] = v(l ^ 5);
      want[5 * i + 1] = v((l & ~std::size_t{7}) + 3);
      want[5 * i + 2] = l % 16 >= 3 ? v(l - 3) : v(l);
      want[5 * i + 3] = l % 16 + 5 < 16 ? v(l + 5) : v(l);
      want[5 * i + 4] = v(l ^ 2);
      dwant[i] = static_cast<double>(v(31 - l)) * 1.5;
    }
    expect_equal(download<int>(dout, 5 * n), want, "shuffles (5 per thread)");
    expect_equal(download<double>(ddout, n), dwant, "double shuffle");
  }

  TEST_CASE_FIXTURE(Conformance,
                    "conformance.warp: popc clz ffs brev byte_perm funnelshift and friends") {
    const CUfunction f = function(load_ptx("warp"), "bit_ops");
    std::vector<unsigned> a{0, 1, 0x80000000u, 0xffffffffu, 0x12345678u, 0x00010000u};
    std::vector<unsigned> b{0, 31, 32, 33, 0x1234u, 0xffffffffu};
    std::vector<u64> c{0, 1, 1ull << 63, ~0ull, 0x0123456789abcdefull, 1ull << 32};
    conf::Rng rng(42);
    for (int i = 0; i < 194; ++i) {
      a.push_back(static_cast<unsigned>(rng.next()) >> (i % 7));
      b.push_back(static_cast<unsigned>(rng.next()));
      c.push_back(rng.next() >> (i % 9));
    }
    const auto n = static_cast<int>(a.size());
    const CUdeviceptr da = upload(a);
    const CUdeviceptr db = upload(b);
    const CUdeviceptr dc = upload(c);
    const CUdeviceptr dout = zeros<u64>(16 * a.size());
    run(f, {2}, {100}, 0, da, db, dc, dout, n);
    std::vector<u64> want;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const unsigned x = a[i], y = b[i];
      const u64 z = c[i];
      const auto ffs32 = [](unsigned v) {
        return v == 0 ? 0u : static_cast<unsigned>(std::countr_zero(v)) + 1u;
      };
      const auto ffs64 = [](u64 v) {
        return v == 0 ? 0u : static_cast<unsigned>(std::countr_zero(v)) + 1u;
      };
      const unsigned sad = absdiff_s(static_cast<int>(x), static_cast<int>(y)) + 7u;
      const unsigned usad = absdiff_u(x, y) + 3u;
      const auto uhadd = static_cast<unsigned>((u64{x} + y) >> 1);
      const auto mulhi = static_cast<int>(
          (static_cast<long long>(static_cast<int>(x)) * static_cast<int>(y)) >> 32);
      const u64 r[16] = {static_cast<u64>(std::popcount(x)),
                         static_cast<u64>(std::popcount(z)),
                         static_cast<u64>(std::countl_zero(x)),
                         static_cast<u64>(std::countl_zero(z)),
                         ffs32(x),
                         ffs64(z),
                         brev32(x),
                         brev64(z),
                         byte_perm(x, y, y & 0x7777u),
                         funnel_l(x, y, y & 31u),
                         funnel_r(x, y, y & 31u),
                         funnel_l(x, y, std::min(y & 63u, 32u)),
                         funnel_r(x, y, std::min(y & 63u, 32u)),
                         static_cast<unsigned>(mulhi),
                         mul_hi64(z, u64{x} * 0x9e3779b97f4a7c15ull),
                         (u64{sad} << 32) | usad | (u64{uhadd} << 40)};
      want.insert(want.end(), std::begin(r), std::end(r));
    }
    expect_equal(download<u64>(dout, want.size()), want, "bit results (16 per input)");
  }
}
