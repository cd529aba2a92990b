// RUN: aclgen opt %s -p tile-rows | filecheck %s
// RUN: aclgen opt %s -p tile-rows,convert-scf-to-cf,expand-math,lower-to-llvm | filecheck %s --check-prefix=LLVM

// A softmax over the last dim (reduced = 1) that also returns the row maximum: per row, one
// pass for amax, one for the sum of exp(x - max), then the column loop writes x's outputs and
// the row value is stored once at the row's position.

// CHECK-LABEL: func.func @softmax
// CHECK:       scf.for %[[ROW:[0-9]+]] = %begin to %end step %{{.*}} : i64 {
// The first pass: full steps of 32 columns into a vector<32xf32> accumulator that starts at -inf...
// CHECK:         %[[NEGINF:[0-9]+]] = ew.constant -inf : vector<32xf32>
// CHECK:         scf.for {{.*}} iter_args({{.*}}) -> (vector<32xf32>)
// CHECK:           scf.for {{.*}} iter_args(%[[A:[0-9]+]] = {{.*}}) -> (vector<32xf32>)
// CHECK:           %[[X:[0-9]+]] = tile.load %{{.*}}[%{{.*}}] stride %{{.*}} "contiguous" : f32 -> vector<32xf32>
// CHECK-NEXT:      ew.maximum %[[A]], %[[X]]
// CHECK:         } {tile.reduce}
// ...then one masked step for the tail: only the first lanes are read, the others are -inf.
// CHECK:           %[[M:[0-9]+]] = tile.prefix %{{.*}} : i64 -> vector<32xi1>
// CHECK-NEXT:      tile.load {{.*}} mask %[[M]] : vector<32xi1> "contiguous" {fill = 0.000000e+00 : f32}
// CHECK:           ew.select %[[M]], %{{.*}}, %{{.*}} : vector<32xi1>, vector<32xf32>, vector<32xf32>
// CHECK:         } {tile.reduce}
// The fixed tree: lanes 0-15 with 16-31, 0-7 with 8-15, ... down to one lane.
// CHECK:         tile.shuffle %{{.*}} [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] : vector<32xf32> -> vector<16xf32>
// CHECK:         tile.shuffle %{{.*}} [16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31]
// CHECK:         %[[MAX:[0-9]+]] = tile.extract %{{.*}}[0] : vector<1xf32> -> f32
// The second pass recomputes exp(x - max) and sums it from +0.
// CHECK:         ew.constant 0.0 : vector<32xf32>
// CHECK:           tile.splat %[[MAX]] : f32 -> vector<32xf32>
// CHECK:           ew.exp
// CHECK:           ew.add
// CHECK:         %[[SUM:[0-9]+]] = tile.extract %{{.*}}[0] : vector<1xf32> -> f32
// The row value (the second output) is stored once; the column loop divides.
// CHECK:         tile.store %[[MAX]], %{{.*}}[%{{.*}}] stride %{{.*}} "contiguous" : f32 -> f32
// CHECK:           ew.div %{{.*}}, %[[SUM]] : f32, f32 -> f32
// CHECK:         } {tile.inner, tile.no_peel}

// LLVM: llvm.func @softmax
// LLVM: llvm.call_intrinsic "llvm.masked.load.v32f32.p0"
// LLVM-NOT: ew.
// LLVM-NOT: tile.

builtin.module {
  "ew.kernel"() <{sym_name = "softmax", inputs = [!ew.view<2xf32, contiguous>], outputs = [!ew.view<2xf32, contiguous>, !ew.view<2xf32, broadcast>], params = [], arg_names = ["x", "y", "m"], reduced = #builtin.int<1>}> ({
  ^bb0(%x: f32):
    %0 = ew.reduce "amax" %x : f32 -> f32
    %1 = ew.sub %x, %0 : f32, f32 -> f32
    %2 = ew.exp %1 : f32 -> f32
    %3 = ew.reduce "sum" %2 : f32 -> f32
    %4 = ew.div %2, %3 : f32, f32 -> f32
    ew.yield %4, %0 : f32, f32
  }) : () -> ()
}
