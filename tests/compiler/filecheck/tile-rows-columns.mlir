// RUN: aclgen opt %s -p tile-rows | filecheck %s

// A `columns` kernel (dgamma = sum over the rows of dy * x) runs 64 adjacent kept points (rows of
// the reduction) a block, vectorized along the kept dim, and walks its runs for 16 blocks at once
// (1024 columns: every reduction is in the first pass). Each block's 32 accumulators
// (vector<64xf32> each) wait in a stack array (tile.alloca, 16 x 32 of them): set to the
// identity, then the run is walked once, element j of block g adding into accumulator
// g * 32 + j mod 32 (the full blocks unmasked, the last one masked) while the lines of element
// j + 8 are prefetched; the lanes the run's last group lacks get the identity; then each block
// folds its 32 accumulators and stores a vector of rows.

// CHECK-LABEL: func.func @dgamma
// CHECK:       %[[ACC:.*]] = tile.alloca 512 x vector<64xf32>
// CHECK:       %[[STEP:.*]] = arith.constant 1024 : i64
// CHECK-NEXT:  scf.for %[[COL:.*]] = %{{.*}} to %{{.*}} step %[[STEP]] : i64 {
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i64 {
// CHECK:           %[[ZERO:.*]] = ew.constant 0.0 : vector<64xf32>
// CHECK:           tile.store %[[ZERO]], %[[ACC]][%{{.*}}] stride %{{.*}} "contiguous" : vector<64xf32> -> f32
// CHECK:         %[[COUNT:.*]] = arith.minsi %{{.*}}, %{{.*}} : i64
// CHECK:         %[[FULL:.*]] = arith.minsi %[[COUNT]], %{{.*}} : i64
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i64 {
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} : i64 {
// CHECK:             %[[L:.*]] = arith.remsi %[[J]], %{{.*}} : i64
// CHECK:             scf.for %[[G:.*]] = %{{.*}} to %[[FULL]] step %{{.*}} : i64 {
// CHECK:               %[[C:.*]] = arith.addi %[[COL]], %{{.*}} : i64
// CHECK-NEXT:          tile.load %{{.*}}[%[[C]]] stride %{{.*}} "contiguous" : f32 -> vector<64xf32>
// CHECK:               tile.prefetch %{{.*}}[%{{.*}}] : f32
// CHECK:               %[[GL:.*]] = arith.muli %[[G]], %{{.*}} : i64
// CHECK-NEXT:          %[[SLOT:.*]] = arith.addi %[[GL]], %[[L]] : i64
// CHECK:               %[[AT:.*]] = arith.muli %[[SLOT]], %{{.*}} : i64
// CHECK:               %[[OLD:.*]] = tile.load %[[ACC]][%[[AT]]] stride %{{.*}} "contiguous" : f32 -> vector<64xf32>
// CHECK-NEXT:          %[[NEW:.*]] = ew.add %[[OLD]], %{{.*}} : vector<64xf32>, vector<64xf32> -> vector<64xf32>
// CHECK:               tile.store %[[NEW]], %[[ACC]][%[[AT]]] stride %{{.*}} "contiguous" : vector<64xf32> -> f32
// CHECK:             scf.for %{{.*}} = %[[FULL]] to %[[COUNT]] step %{{.*}} : i64 {
// CHECK:               %[[MASK:.*]] = tile.prefix %{{.*}} : i64 -> vector<64xi1>
// CHECK-NEXT:          tile.load %{{.*}}[%{{.*}}] stride %{{.*}} mask %[[MASK]] : vector<64xi1> "contiguous" {fill = 0.000000e+00 : f32} : f32 -> vector<64xf32>
// CHECK:           } {tile.reduce}
// CHECK:         scf.for %{{.*}} = %{{.*}} to %[[COUNT]] step %{{.*}} : i64 {
// CHECK:           %[[M:.*]] = tile.prefix %{{.*}} : i64 -> vector<64xi1>
// CHECK:           tile.load %[[ACC]][%{{.*}}] stride %{{.*}} "contiguous" : f32 -> vector<64xf32>
// CHECK:           tile.store %{{.*}}, %out0[%{{.*}}] stride %{{.*}} mask %[[M]] : vector<64xi1> "contiguous" : vector<64xf32> -> f32
// CHECK:       } {tile.rows}
builtin.module {
  "ew.kernel"() <{sym_name = "dgamma", inputs = [!ew.view<2xf32, contiguous>, !ew.view<2xf32, contiguous>], outputs = [!ew.view<2xf32, contiguous>], params = [], arg_names = ["dy", "x", "dgamma"], reduced = #builtin.int<1>, columns}> ({
  ^bb0(%dy: f32, %x: f32):
    %0 = ew.mul %dy, %x : f32, f32 -> f32
    %1 = ew.reduce "sum" %0 : f32 -> f32
    ew.yield %1 : f32
  }) : () -> ()
}
