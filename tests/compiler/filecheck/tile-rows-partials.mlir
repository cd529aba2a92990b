// RUN: aclgen opt %s -p tile-rows | filecheck %s

// A sum across rows that rides a row kernel (RmsNormGrad's dgamma next to dx): the rows run in
// blocks of `blocks` (the range [begin, end) counts rows, in whole blocks), each block's partial
// row at block index * row length; the block's first row stores its values, the others add
// theirs (the partial is loaded, added to, and the select picks the value alone on the first).

// CHECK-LABEL: func.func @dx_dgamma
// CHECK:       scf.for %[[LO:.*]] = %begin to %end step %[[B:.*]] : i64 {
// CHECK:         %[[HI:.*]] = arith.minsi %{{.*}}, %{{.*}} : i64
// CHECK:         %[[BLK:.*]] = arith.divsi %[[LO]], %{{.*}} : i64
// CHECK-NEXT:    %[[AT:.*]] = arith.muli %[[BLK]], %{{.*}} : i64
// CHECK-NEXT:    %[[PART:.*]] = tile.offset %out1[%[[AT]]] : f32
// CHECK:         scf.for %[[ROW:.*]] = %[[LO]] to %[[HI]] step %{{.*}} : i64 {
// CHECK:           %[[FIRST:.*]] = arith.cmpi eq, %[[ROW]], %[[LO]] : i64
// CHECK:             %[[V:.*]] = ew.mul %{{.*}}, %{{.*}} : f32, f32 -> f32
// CHECK-NEXT:        %[[OLD:.*]] = tile.load %[[PART]][%{{.*}}] stride %{{.*}} "contiguous" : f32 -> f32
// CHECK-NEXT:        %[[SUM:.*]] = ew.add %[[OLD]], %[[V]] : f32, f32 -> f32
// CHECK-NEXT:        %[[NEW:.*]] = ew.select %[[FIRST]], %[[V]], %[[SUM]] : i1, f32, f32 -> f32
// CHECK-NEXT:        tile.store %[[NEW]], %[[PART]][%{{.*}}] stride %{{.*}} "contiguous" : f32 -> f32
// CHECK:           } {tile.inner, tile.no_peel}
// CHECK:         } {tile.rows}
builtin.module {
  "ew.kernel"() <{sym_name = "dx_dgamma", inputs = [!ew.view<2xf32, contiguous>, !ew.view<2xf32, contiguous>], outputs = [!ew.view<2xf32, contiguous>, !ew.view<2xf32, contiguous>], params = [], arg_names = ["dy", "x", "dx", "dgamma"], reduced = #builtin.int<1>, partials = [#builtin.int<1>], blocks = #builtin.int<64>}> ({
  ^bb0(%dy: f32, %x: f32):
    %0 = ew.mul %dy, %x : f32, f32 -> f32
    %1 = ew.reduce "sum" %0 : f32 -> f32
    %2 = ew.sub %dy, %1 : f32, f32 -> f32
    %3 = ew.mul %x, %dy : f32, f32 -> f32
    ew.yield %2, %3 : f32, f32
  }) : () -> ()
}
