// RUN: aclgen opt %s -p 'expand-math{fma=off}' | filecheck %s
// RUN: aclgen opt %s -p 'expand-math{fma=on}' | filecheck %s --check-prefix=FMA

// ew.exp and ew.sigmoid become straight-line f32 code (no libcall, so it vectorizes): NaN set
// aside, clamp to [-104, 89], n = roundeven(x * log2 e) by the 1.5 * 2^23 trick, Cody-Waite
// reduction with C1 = 0.693359375, a degree-5 polynomial, and the scale by 2^n split in two
// powers of two built from integer bits. fma=on fuses the polynomial's multiply-adds.

// CHECK-LABEL: sym_name = "k"
// CHECK-NOT:   ew.exp
// CHECK:       %[[NAN:.*]] = ew.isnan %x : f32 -> i1
// CHECK:       ew.constant -104.0 : f32
// CHECK:       ew.constant 89.0 : f32
// CHECK:       %[[MAGIC:.*]] = ew.constant 12582912.0 : f32
// CHECK:       ew.constant 1.4426950216293335 : f32
// CHECK:       ew.constant 0.693359375 : f32
// CHECK-NOT:   math.fma
// CHECK:       arith.bitcast %{{.*}} : f32 to i32
// CHECK:       arith.shrsi
// CHECK:       arith.shli
// CHECK:       arith.bitcast %{{.*}} : i32 to f32
// CHECK:       %[[EXP:.*]] = ew.select %[[NAN]], %x, %{{.*}} : i1, f32, f32 -> f32
// The sigmoid of that: exp(-|x|), then 1 / (1 + e) on the side of x's sign.
// CHECK:       %[[A:.*]] = ew.abs %[[EXP]] : f32 -> f32
// CHECK-NEXT:  ew.neg %[[A]] : f32 -> f32
// CHECK:       ew.constant 12582912.0 : f32
// CHECK:       ew.div
// CHECK:       ew.yield
// CHECK-NOT:   ew.sigmoid
// CHECK-NOT:   ew.exp

// FMA-NOT:     ew.exp
// FMA:         math.fma %{{.*}}, %{{.*}}, %{{.*}} : f32
// FMA-NOT:     ew.sigmoid
// FMA:         ew.yield

builtin.module {
  "ew.kernel"() <{sym_name = "k", inputs = [!ew.view<1xf32, contiguous>], outputs = [!ew.view<1xf32, contiguous>], params = [], arg_names = ["x", "out"]}> ({
  ^bb0(%x: f32):
    %0 = ew.exp %x : f32 -> f32
    %1 = ew.sigmoid %0 : f32 -> f32
    ew.yield %1 : f32
  }) : () -> ()
}
