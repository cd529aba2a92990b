// RUN: aclgen opt %s --split-input-file -p 'vectorize-elementwise{width=8 align=false}' | filecheck %s
// RUN: aclgen opt %s --split-input-file -p 'vectorize-elementwise{width=8 nontemporal=true}' | filecheck %s --check-prefix=PEEL

// With align (the default), the vector loop starts where the first contiguous output's vector
// stores are 32-byte aligned (they then carry align = 32 and, with nontemporal, are streaming
// stores); one scalar loop, run twice by a tile.remainders loop, does the columns before that
// point and the tail.
// PEEL-LABEL: func.func @softshrink_backward_f32_f32_f32_r1_ccc
// PEEL:       %[[GAP:.*]] = tile.align_offset %out0[%[[C0:.*]]] to 32 : f32
// PEEL:       %[[SUM:.*]] = arith.addi %[[C0]], %[[GAP]] : i64
// PEEL:       %[[PEND:.*]] = arith.minsi %[[SUM]], %[[C1:.*]] : i64
// PEEL:       scf.for %{{.*}} = %[[PEND]] to %[[VEND:.*]] step %{{.*}} : i64 {
// PEEL:         tile.store %{{.*}}, %out0[%{{.*}}] stride %{{.*}} "contiguous" {align = 32 : i64, nontemporal} : vector<8xf32> -> f32
// PEEL:       } {tile.vector}
// PEEL:       scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} : i64 {
// PEEL-NEXT:    %[[HEAD:.*]] = arith.cmpi eq, %[[R]], %{{.*}} : i64
// PEEL-NEXT:    %[[LO:.*]] = arith.select %[[HEAD]], %[[C0]], %[[VEND]] : i64
// PEEL-NEXT:    %[[HI:.*]] = arith.select %[[HEAD]], %[[PEND]], %[[C1]] : i64
// PEEL-NEXT:    scf.for %[[S:.*]] = %[[LO]] to %[[HI]] step %{{.*}} : i64 {
// PEEL-NEXT:      %[[LEFT:.*]] = arith.subi %[[HI]], %[[S]] : i64
// PEEL-NEXT:      %[[M:.*]] = tile.prefix %[[LEFT]] : i64 -> vector<8xi1>
// PEEL-NEXT:      tile.load %in0[%[[S]]] stride %{{.*}} mask %[[M]] : vector<8xi1> "contiguous" {fill = 0.000000e+00 : f32} : f32 -> vector<8xf32>
// PEEL:           tile.store %{{.*}}, %out0[%[[S]]] stride %{{.*}} mask %[[M]] : vector<8xi1> "contiguous" : vector<8xf32> -> f32
// PEEL-NEXT:    } {tile.vector}
// PEEL-NEXT:  } {tile.remainders}
// PEEL-NOT:   tile.inner

// The column loop becomes a vector loop of 8 lanes (tile.vector) and one masked vector step for
// the < 8 remaining columns (the tail): no scalar loop is left. The parameter is splatted once,
// before the vector loop; compares give vector<8xi1> masks.

// CHECK-LABEL: func.func @softshrink_backward_f32_f32_f32_r1_ccc
// CHECK:       %[[LAMBD:.*]] = tile.param %meta[4] : f32
// CHECK:       %[[EIGHT:.*]] = arith.constant 8 : i64
// CHECK:       %[[SPLAT:.*]] = tile.splat %[[LAMBD]] : f32 -> vector<8xf32>
// CHECK:       scf.for %[[C:.*]] = %{{.*}} to %[[VEND:.*]] step %[[EIGHT]] : i64 {
// CHECK-NEXT:    %[[G:.*]] = tile.load %in0[%[[C]]] stride %{{.*}} "contiguous" : f32 -> vector<8xf32>
// CHECK-NEXT:    %[[X:.*]] = tile.load %in1[%[[C]]] stride %{{.*}} "contiguous" : f32 -> vector<8xf32>
// CHECK-NEXT:    %[[A:.*]] = ew.abs %[[X]] : vector<8xf32> -> vector<8xf32>
// CHECK-NEXT:    %[[M:.*]] = ew.cmp "ole" %[[A]], %[[SPLAT]] : vector<8xf32>, vector<8xf32> -> vector<8xi1>
// CHECK-NEXT:    %[[Z:.*]] = ew.constant 0.0 : vector<8xf32>
// CHECK-NEXT:    %[[R:.*]] = ew.select %[[M]], %[[Z]], %[[G]] : vector<8xi1>, vector<8xf32>, vector<8xf32> -> vector<8xf32>
// CHECK-NEXT:    tile.store %[[R]], %out0[%[[C]]] stride %{{.*}} "contiguous" : vector<8xf32> -> f32
// CHECK-NEXT:  } {tile.vector}
// CHECK-NEXT:  scf.for %[[T:.*]] = %[[VEND]] to %[[END:.*]] step %[[EIGHT]] : i64 {
// CHECK-NEXT:    %[[LEFT:.*]] = arith.subi %[[END]], %[[T]] : i64
// CHECK-NEXT:    %[[M:.*]] = tile.prefix %[[LEFT]] : i64 -> vector<8xi1>
// CHECK-NEXT:    tile.load %in0[%[[T]]] stride %{{.*}} mask %[[M]] : vector<8xi1> "contiguous" {fill = 0.000000e+00 : f32} : f32 -> vector<8xf32>
// CHECK:         ew.cmp "ole" %{{.*}}, %[[SPLAT]] : vector<8xf32>, vector<8xf32> -> vector<8xi1>
// CHECK:         tile.store %{{.*}}, %out0[%[[T]]] stride %{{.*}} mask %[[M]] : vector<8xi1> "contiguous" : vector<8xf32> -> f32
// CHECK-NEXT:  } {tile.vector}
// CHECK-NOT:   tile.inner
builtin.module {
  func.func @softshrink_backward_f32_f32_f32_r1_ccc(%in0: !llvm.ptr, %in1: !llvm.ptr, %out0: !llvm.ptr, %meta: !llvm.ptr, %begin: i64, %end: i64) attributes {tile.size = 8192 : i64} {
    %dim_n = tile.param %meta[0] : i64
    %0 = tile.param %meta[1] : i64
    %1 = tile.param %meta[2] : i64
    %2 = tile.param %meta[3] : i64
    %3 = tile.param %meta[4] : f32
    %4 = arith.constant 1 : i64
    %5 = arith.constant 8192 : i64
    scf.for %6 = %begin to %end step %5 : i64 {
      %7 = arith.addi %6, %5 : i64
      %8 = arith.minsi %7, %end : i64
      %9 = arith.divsi %6, %dim_n : i64
      %10 = arith.subi %8, %4 : i64
      %11 = arith.divsi %10, %dim_n : i64
      %12 = arith.addi %11, %4 : i64
      scf.for %13 = %9 to %12 step %4 : i64 {
        %14 = arith.muli %13, %dim_n : i64
        %15 = arith.maxsi %6, %14 : i64
        %16 = arith.subi %15, %14 : i64
        %17 = arith.addi %14, %dim_n : i64
        %18 = arith.minsi %8, %17 : i64
        %19 = arith.subi %18, %14 : i64
        scf.for %20 = %16 to %19 step %4 : i64 {
          %21 = tile.load %in0[%20] stride %0 "contiguous" : f32 -> f32
          %22 = tile.load %in1[%20] stride %1 "contiguous" : f32 -> f32
          %23 = ew.abs %22 : f32 -> f32
          %24 = ew.cmp "ole" %23, %3 : f32, f32 -> i1
          %25 = ew.constant 0.0 : f32
          %26 = ew.select %24, %25, %21 : i1, f32, f32 -> f32
          tile.store %26, %out0[%20] stride %2 "contiguous" : f32 -> f32
        } {tile.inner}
      } {tile.rows}
    } {tile.tiles}
    func.return
  }
}
// -----

// A broadcast (stride-0) input is loaded once per row, outside the vector loop, and splatted.

// CHECK-LABEL: func.func @softshrink_backward_f32_f32_f32_r2_bcc
// CHECK:       %[[B:.*]] = tile.load %{{.*}}[%{{.*}}] stride %{{.*}} "broadcast" : f32 -> f32
// CHECK-NEXT:  %[[BV:.*]] = tile.splat %[[B]] : f32 -> vector<8xf32>
// CHECK:       scf.for
// CHECK-NOT:   "broadcast"
// CHECK:       ew.select %{{.*}}, %{{.*}}, %[[BV]] : vector<8xi1>, vector<8xf32>, vector<8xf32> -> vector<8xf32>
// CHECK:       } {tile.vector}
builtin.module {
  func.func @softshrink_backward_f32_f32_f32_r2_bcc(%in0: !llvm.ptr, %in1: !llvm.ptr, %out0: !llvm.ptr, %meta: !llvm.ptr, %begin: i64, %end: i64) attributes {tile.size = 8192 : i64} {
    %dim_m = tile.param %meta[0] : i64
    %dim_n = tile.param %meta[1] : i64
    %0 = tile.param %meta[2] : i64
    %1 = tile.param %meta[3] : i64
    %2 = tile.param %meta[4] : i64
    %3 = tile.param %meta[5] : i64
    %4 = tile.param %meta[6] : i64
    %5 = tile.param %meta[7] : i64
    %6 = tile.param %meta[8] : f32
    %7 = arith.constant 1 : i64
    %8 = arith.constant 8192 : i64
    scf.for %9 = %begin to %end step %8 : i64 {
      %10 = arith.addi %9, %8 : i64
      %11 = arith.minsi %10, %end : i64
      %12 = arith.divsi %9, %dim_n : i64
      %13 = arith.subi %11, %7 : i64
      %14 = arith.divsi %13, %dim_n : i64
      %15 = arith.addi %14, %7 : i64
      scf.for %16 = %12 to %15 step %7 : i64 {
        %17 = arith.muli %16, %dim_n : i64
        %18 = arith.maxsi %9, %17 : i64
        %19 = arith.subi %18, %17 : i64
        %20 = arith.addi %17, %dim_n : i64
        %21 = arith.minsi %11, %20 : i64
        %22 = arith.subi %21, %17 : i64
        %23 = arith.muli %16, %0 : i64
        %24 = tile.offset %in0[%23] : f32
        %25 = arith.muli %16, %2 : i64
        %26 = tile.offset %in1[%25] : f32
        %27 = arith.muli %16, %4 : i64
        %28 = tile.offset %out0[%27] : f32
        scf.for %29 = %19 to %22 step %7 : i64 {
          %30 = tile.load %24[%29] stride %1 "broadcast" : f32 -> f32
          %31 = tile.load %26[%29] stride %3 "contiguous" : f32 -> f32
          %32 = ew.abs %31 : f32 -> f32
          %33 = ew.cmp "ole" %32, %6 : f32, f32 -> i1
          %34 = ew.constant 0.0 : f32
          %35 = ew.select %33, %34, %30 : i1, f32, f32 -> f32
          tile.store %35, %28[%29] stride %5 "contiguous" : f32 -> f32
        } {tile.inner}
      } {tile.rows}
    } {tile.tiles}
    func.return
  }
}
// -----

// A row kernel's column loop (tile.no_peel) is not peeled: the last < 8 columns are one
// more vector step whose load and store take the mask of the columns left (strided views too:
// a masked gather, and a masked scatter).

// CHECK-LABEL: func.func @scale_rows
// CHECK:       scf.for %[[C:.*]] = %{{.*}} to %[[VEND:.*]] step %[[EIGHT:.*]] : i64 {
// CHECK:       } {tile.vector}
// CHECK-NEXT:  scf.for %[[T:.*]] = %[[VEND]] to %[[N:.*]] step %[[EIGHT]] : i64 {
// CHECK-NEXT:    %[[LEFT:.*]] = arith.subi %[[N]], %[[T]] : i64
// CHECK-NEXT:    %[[M:.*]] = tile.prefix %[[LEFT]] : i64 -> vector<8xi1>
// CHECK-NEXT:    %{{.*}} = tile.load %{{.*}}[%[[T]]] stride %{{.*}} mask %[[M]] : vector<8xi1> "strided" {fill = 0.000000e+00 : f32} : f32 -> vector<8xf32>
// CHECK:         tile.store %{{.*}}, %{{.*}}[%[[T]]] stride %{{.*}} mask %[[M]] : vector<8xi1> "contiguous" : vector<8xf32> -> f32
// CHECK-NEXT:  } {tile.vector}
// CHECK-NOT:   tile.inner

// With nontemporal, a row whose output starts on a register boundary and is whole vectors long
// (no columns before the boundary, none after the last vector) streams every store, aligned;
// any other row stores as usual: a streamed line next to an ordinary store to a partial line
// would be fetched again.
// PEEL-LABEL: func.func @scale_rows
// PEEL:       %[[GAP:.*]] = tile.align_offset %out0[%{{.*}}] to 32 : f32
// PEEL:       %[[REST:.*]] = arith.subi %n, %[[VEND:.*]] : i64
// PEEL:       %[[LEFT:.*]] = arith.addi %[[GAP]], %[[REST]] : i64
// PEEL:       %[[WHOLE:.*]] = arith.cmpi eq, %[[LEFT]], %{{.*}} : i64
// PEEL-NEXT:  scf.if %[[WHOLE]] {
// PEEL-NEXT:    scf.for %{{.*}} = %{{.*}} to %n step %{{.*}} : i64 {
// PEEL:           tile.store %{{.*}}, %out0[%{{.*}}] stride %{{.*}} "contiguous" {align = 32 : i64, nontemporal} : vector<8xf32> -> f32
// PEEL-NEXT:    } {tile.vector}
// PEEL-NEXT:  } else {
// PEEL-NEXT:    scf.for %{{.*}} = %{{.*}} to %[[VEND]] step %{{.*}} : i64 {
// PEEL:           tile.store %{{.*}}, %out0[%{{.*}}] stride %{{.*}} "contiguous" : vector<8xf32> -> f32
// PEEL-NEXT:    } {tile.vector}
// PEEL-NEXT:    scf.for %{{.*}} = %[[VEND]] to %n step %{{.*}} : i64 {
// PEEL:           tile.store %{{.*}} mask %{{.*}} : vector<8xi1> "contiguous" : vector<8xf32> -> f32
// PEEL-NEXT:    } {tile.vector}
// PEEL-NEXT:  }
builtin.module {
  func.func @scale_rows(%in0: !llvm.ptr, %out0: !llvm.ptr, %n: i64, %s: i64, %k: f32) {
    %0 = arith.constant 0 : i64
    %1 = arith.constant 1 : i64
    scf.for %2 = %0 to %n step %1 : i64 {
      %3 = tile.load %in0[%2] stride %s "strided" : f32 -> f32
      %4 = ew.mul %3, %k : f32, f32 -> f32
      tile.store %4, %out0[%2] stride %1 "contiguous" : f32 -> f32
    } {tile.inner, tile.no_peel}
    func.return
  }
}
