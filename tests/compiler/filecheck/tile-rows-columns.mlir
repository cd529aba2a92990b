// RUN: aclgen opt %s -p tile-rows | filecheck %s

// A `columns` kernel (dgamma = sum over the rows of dy * x) runs 64 adjacent kept points (rows of
// the reduction) at a time, vectorized along the kept dim: the loops walk the runs of the
// innermost kept dim in blocks of 64, the last one masked; each of the 32 accumulators is a
// vector<64xf32> in a register while it adds elements l, l + 32, ... of the run, then waits in a
// stack array (tile.alloca) for the fold; the result is stored a vector of rows at a time.

// CHECK-LABEL: func.func @dgamma
// CHECK:       %[[ACC:.*]] = tile.alloca 32 x vector<64xf32>
// CHECK:       %[[W:.*]] = arith.constant 64 : i64
// CHECK-NEXT:    scf.for %[[COL:.*]] = %{{.*}} to %{{.*}} step %[[W]] : i64 {
// CHECK-NEXT:    %{{.*}} = arith.subi %{{.*}}, %[[COL]] : i64
// CHECK-NEXT:    %[[MASK:.*]] = tile.prefix %{{.*}} : i64 -> vector<64xi1>
// CHECK:         scf.for %[[LANE:.*]] = %{{.*}} to %{{.*}} step %{{.*}} : i64 {
// CHECK:           scf.for %[[J:.*]] = %[[LANE]] to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (vector<64xf32>) : i64 {
// CHECK:             tile.load %{{.*}}[%[[COL]]] stride %{{.*}} mask %[[MASK]] : vector<64xi1> "contiguous" {fill = 0.000000e+00 : f32} : f32 -> vector<64xf32>
// CHECK:           } {tile.reduce}
// CHECK:         tile.store %{{.*}}, %[[ACC]][%{{.*}}] stride %{{.*}} "contiguous" : vector<64xf32> -> f32
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
