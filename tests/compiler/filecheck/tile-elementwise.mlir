// RUN: aclgen opt %s -p 'tile-elementwise{tile_size=1024}' | filecheck %s

// A legalized f32 SoftshrinkBackward kernel becomes a func.func over raw pointers: shapes, strides
// and the parameter come from the launch record (%meta); a tile loop steps by tile_size and, the
// space being rank 1 (one row), the column loop (tile.inner) runs over the tile's [t, min(t +
// tile_size, end)) directly, with no row loop or division, holding the formula between tile.load
// and tile.store.

// CHECK-NOT:   ew.kernel
// CHECK:       func.func @softshrink_backward_f32_f32_f32_r1_ccc(%in0: !llvm.ptr, %in1: !llvm.ptr, %out0: !llvm.ptr, %meta: !llvm.ptr, %begin: i64, %end: i64)
// CHECK-SAME:  tile.size = 1024 : i64
// CHECK:       %dim_n = tile.param %meta[0] : i64
// CHECK:       %[[LAMBD:.*]] = tile.param %meta[4] : f32
// CHECK:       %[[TILE:.*]] = arith.constant 1024 : i64
// CHECK:       scf.for %[[T:.*]] = %begin to %end step %[[TILE]] : i64 {
// CHECK-NEXT:    %[[T1:.*]] = arith.addi %[[T]], %[[TILE]] : i64
// CHECK-NEXT:    %[[TEND:.*]] = arith.minsi %[[T1]], %end : i64
// CHECK-NEXT:    scf.for %[[C:.*]] = %[[T]] to %[[TEND]] step %{{.*}} : i64 {
// CHECK-NEXT:        %[[G:.*]] = tile.load %in0[%[[C]]] stride %{{.*}} "contiguous" : f32 -> f32
// CHECK-NEXT:        %[[X:.*]] = tile.load %in1[%[[C]]] stride %{{.*}} "contiguous" : f32 -> f32
// CHECK-NEXT:        %[[A:.*]] = ew.abs %[[X]] : f32 -> f32
// CHECK-NEXT:        %[[M:.*]] = ew.cmp "ole" %[[A]], %[[LAMBD]] : f32, f32 -> i1
// CHECK:             %[[R:.*]] = ew.select %[[M]], %{{.*}}, %[[G]] : i1, f32, f32 -> f32
// CHECK-NEXT:        tile.store %[[R]], %out0[%[[C]]] stride %{{.*}} "contiguous" : f32 -> f32
// CHECK-NEXT:    } {tile.inner}
// CHECK-NEXT:  } {tile.tiles}
// CHECK-NEXT:  func.return
// CHECK-NOT:   ew.yield
builtin.module {
  "ew.kernel"() <{sym_name = "softshrink_backward_f32_f32_f32_r1_ccc", inputs = [!ew.view<1xf32, contiguous>, !ew.view<1xf32, contiguous>], outputs = [!ew.view<1xf32, contiguous>], params = [f32], arg_names = ["gradOutput", "self", "lambd", "gradInput"]}> ({
  ^bb0(%gradOutput: f32, %self: f32, %lambd: f32):
    %0 = ew.abs %self : f32 -> f32
    %1 = ew.cmp "ole" %0, %lambd : f32, f32 -> i1
    %2 = ew.constant 0.0 : f32
    %3 = ew.select %1, %2, %gradOutput : i1, f32, f32 -> f32
    ew.yield %3 : f32
  }) : () -> ()
}