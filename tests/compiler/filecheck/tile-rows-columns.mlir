// RUN: aclgen opt %s -p tile-rows | filecheck %s

// A `columns` kernel (dgamma = sum over the rows of dy * x) runs 64 adjacent kept points (rows of
// the reduction) at a time, vectorized along the kept dim: the loops walk the runs of the
// innermost kept dim in blocks of 64, the last one masked. The 32 accumulators (vector<64xf32>
// each) wait in a stack array (tile.alloca): set to the identity, then the run is walked once,
// element j adding into accumulator j mod 32 while the lines of element j + 8 are prefetched;
// the lanes the run's last group lacks get the identity, and the fold's result is stored a
// vector of rows at a time.

// CHECK-LABEL: func.func @dgamma
// CHECK:       %[[ACC:.*]] = tile.alloca 32 x vector<64xf32>
// CHECK:       %[[W:.*]] = arith.constant 64 : i64
// CHECK-NEXT:    scf.for %[[COL:.*]] = %{{.*}} to %{{.*}} step %[[W]] : i64 {
// CHECK-NEXT:    %{{.*}} = arith.subi %{{.*}}, %[[COL]] : i64
// CHECK-NEXT:    %[[MASK:.*]] = tile.prefix %{{.*}} : i64 -> vector<64xi1>
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i64 {
// CHECK:           %[[ZERO:.*]] = ew.constant 0.0 : vector<64xf32>
// CHECK:           tile.store %[[ZERO]], %[[ACC]][%{{.*}}] stride %{{.*}} "contiguous" : vector<64xf32> -> f32
// CHECK:         scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i64 {
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} : i64 {
// CHECK:             tile.load %{{.*}}[%[[COL]]] stride %{{.*}} mask %[[MASK]] : vector<64xi1> "contiguous" {fill = 0.000000e+00 : f32} : f32 -> vector<64xf32>
// CHECK:             tile.prefetch %{{.*}}[%{{.*}}] : f32
// CHECK:             %[[L:.*]] = arith.remsi %[[J]], %{{.*}} : i64
// CHECK:             %[[AT:.*]] = arith.muli %[[L]], %{{.*}} : i64
// CHECK:             %[[OLD:.*]] = tile.load %[[ACC]][%[[AT]]] stride %{{.*}} "contiguous" : f32 -> vector<64xf32>
// CHECK-NEXT:        %[[NEW:.*]] = ew.add %[[OLD]], %{{.*}} : vector<64xf32>, vector<64xf32> -> vector<64xf32>
// CHECK:             tile.store %[[NEW]], %[[ACC]][%[[AT]]] stride %{{.*}} "contiguous" : vector<64xf32> -> f32
// CHECK-NEXT:      } {tile.reduce}
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i64 {
// CHECK:             ew.add %{{.*}}, %{{.*}} : vector<64xf32>, vector<64xf32> -> vector<64xf32>
// CHECK:         tile.store %{{.*}}, %{{.*}}[%[[COL]]] stride %{{.*}} mask %[[MASK]] : vector<64xi1> "contiguous" : vector<64xf32> -> f32
// CHECK:       } {tile.rows}
builtin.module {
  "ew.kernel"() <{sym_name = "dgamma", inputs = [!ew.view<2xf32, contiguous>, !ew.view<2xf32, contiguous>], outputs = [!ew.view<2xf32, contiguous>], params = [], arg_names = ["dy", "x", "dgamma"], reduced = #builtin.int<1>, columns}> ({
  ^bb0(%dy: f32, %x: f32):
    %0 = ew.mul %dy, %x : f32, f32 -> f32
    %1 = ew.reduce "sum" %0 : f32 -> f32
    ew.yield %1 : f32
  }) : () -> ()
}
