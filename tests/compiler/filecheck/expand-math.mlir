// RUN: aclgen opt %s -p 'expand-math{fma=false}' | filecheck %s
// RUN: aclgen opt %s -p 'expand-math{fma=true}' | filecheck %s --check-prefix=FMA
// RUN: aclgen opt %s -p 'expand-math{fma=true avx512=true}' | filecheck %s --check-prefix=AVX512

// ew.exp and ew.sigmoid become straight-line f32 code (no libcall, so it vectorizes): clamp to
// [-104, 89] (ordered compares: NaN passes, no select for it), n = roundeven(x * log2 e) by the
// 1.5 * 2^23 trick, Cody-Waite reduction with C1 = 0x1.62e4p-1, a degree-4 polynomial by Estrin's
// scheme, 1 + r split exactly (Fast2Sum), and the scale by 2^n split in two powers of two built
// from integer bits. fma=true fuses the multiply-adds.

// CHECK-LABEL: sym_name = "k"
// CHECK-NOT:   ew.exp
// CHECK-NOT:   "une"
// CHECK:       ew.constant 89.0 : f32
// CHECK:       ew.constant -104.0 : f32
// CHECK:       ew.constant 1.4426950216293335 : f32
// CHECK:       %[[MAGIC:.*]] = ew.constant 12582912.0 : f32
// CHECK:       ew.constant -0.693145751953125 : f32
// CHECK-NOT:   math.fma
// Estrin: r^2 first, then (c1 r + c0) and (c3 r + c2) beside it.
// CHECK:       %[[R2:.*]] = ew.mul %[[R:.*]], %[[R]] : f32, f32 -> f32
// CHECK:       ew.mul %{{.*}}, %[[R]] : f32, f32 -> f32
// Fast2Sum: hi = 1 + r, lo = (1 - hi) + r.
// CHECK:       %[[ONE:.*]] = ew.constant 1.0 : f32
// CHECK-NEXT:  %[[HI:.*]] = ew.add %[[ONE]], %[[R]] : f32, f32 -> f32
// CHECK-NEXT:  %[[D:.*]] = ew.sub %[[ONE]], %[[HI]] : f32, f32 -> f32
// CHECK-NEXT:  ew.add %[[D]], %[[R]] : f32, f32 -> f32
// CHECK:       arith.shrsi
// CHECK:       arith.shli
// CHECK:       arith.bitcast %{{.*}} : i32 to f32

// The sigmoid of that: exp(-|x|) with the lower clamp only and no NaN select; the shifter
// 1.5 * 2^23 + 152 leaves n + 152 in t's low bits, which shifted into the exponent field are
// the one scale 2^(n + 25); then one division of values scaled by 2^25.
// CHECK:       %[[A:.*]] = ew.abs %[[EXP:[0-9]+]] : f32 -> f32
// CHECK-NEXT:  ew.neg %[[A]] : f32 -> f32
// CHECK-NOT:   ew.isnan
// CHECK-NOT:   89.0
// CHECK:       ew.constant -104.0 : f32
// CHECK:       %[[SHIFTER:.*]] = ew.constant 12583064.0 : f32
// CHECK:       %[[T:.*]] = ew.add %{{.*}}, %[[SHIFTER]] : f32, f32 -> f32
// CHECK:       %[[BITS:.*]] = arith.bitcast %[[T]] : f32 to i32
// CHECK-NEXT:  %[[C23:.*]] = ew.constant 23 : i32
// CHECK-NEXT:  %[[SH:.*]] = arith.shli %[[BITS]], %[[C23]] : i32
// CHECK-NEXT:  %[[SCALE:.*]] = arith.bitcast %[[SH]] : i32 to f32
// CHECK-NOT:   arith.shrsi
// CHECK:       %[[E:.*]] = ew.add %{{.*}}, %[[SCALE]] : f32, f32 -> f32
// CHECK-NEXT:  %[[UNIT:.*]] = ew.constant 33554432.0 : f32
// CHECK:       %[[GE:.*]] = ew.cmp "oge" %[[EXP]], %{{.*}} : f32, f32 -> i1
// CHECK-NEXT:  %[[NUM:.*]] = ew.select %[[GE]], %[[UNIT]], %[[E]] : i1, f32, f32 -> f32
// CHECK-NEXT:  %[[DEN:.*]] = ew.add %[[UNIT]], %[[E]] : f32, f32 -> f32
// CHECK-NEXT:  %[[Q:.*]] = ew.div %[[NUM]], %[[DEN]] : f32, f32 -> f32
// CHECK-NEXT:  ew.yield %[[Q]] : f32
// CHECK-NOT:   ew.sigmoid
// CHECK-NOT:   ew.exp

// FMA-NOT:     ew.exp
// FMA:         %[[T:.*]] = math.fma %{{.*}}, %{{.*}}, %{{.*}} : f32
// FMA:         arith.bitcast %[[T]] : f32 to i32
// FMA:         ew.abs
// FMA:         %[[ST:.*]] = math.fma %{{.*}}, %{{.*}}, %{{.*}} : f32
// FMA:         %[[SBITS:.*]] = arith.bitcast %[[ST]] : f32 to i32
// FMA-NEXT:    %[[C23:.*]] = ew.constant 23 : i32
// FMA-NEXT:    %[[SSH:.*]] = arith.shli %[[SBITS]], %[[C23]] : i32
// FMA-NEXT:    %[[SCALE:.*]] = arith.bitcast %[[SSH]] : i32 to f32
// FMA:         %[[E:.*]] = math.fma %{{.*}}, %[[SCALE]], %[[SCALE]] : f32
// FMA:         ew.div
// FMA-NOT:     ew.sigmoid
// FMA:         ew.yield

// With AVX-512F (avx512=true), exp ends with one vscalefps of hi + t by n, the float the
// shifter gives (`llvmx.avx512ps "scalef"`), instead of two powers of two built from n's bits: no
// arithmetic shift, no shift into the exponent field. sigmoid's own scale is one shift already
// and stays.
// AVX512-NOT:  ew.exp
// AVX512:      %[[N:.*]] = ew.sub %{{.*}}, %{{.*}} : f32, f32 -> f32
// AVX512-NOT:  arith.shrsi
// AVX512:      %[[ONE:.*]] = ew.constant 1.0 : f32
// AVX512-NEXT: %[[HI:.*]] = ew.add %[[ONE]], %{{.*}} : f32, f32 -> f32
// AVX512:      %[[V:.*]] = ew.add %[[HI]], %{{.*}} : f32, f32 -> f32
// AVX512-NEXT: llvmx.avx512ps "scalef"(%[[V]], %[[N]]) : f32, f32 -> f32
// AVX512:      ew.abs
// AVX512:      arith.shli
// AVX512:      ew.div

builtin.module {
  "ew.kernel"() <{sym_name = "k", inputs = [!ew.view<1xf32, contiguous>], outputs = [!ew.view<1xf32, contiguous>], params = [], arg_names = ["x", "out"]}> ({
  ^bb0(%x: f32):
    %0 = ew.exp %x : f32 -> f32
    %1 = ew.sigmoid %0 : f32 -> f32
    ew.yield %1 : f32
  }) : () -> ()
}
