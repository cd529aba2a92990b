// RUN: aclgen opt %s --split-input-file -p 'vectorize-elementwise{width=8 align=false}' | filecheck %s
// RUN: aclgen opt %s --split-input-file -p 'vectorize-elementwise{width=8 nontemporal=true}' | filecheck %s --check-prefix=PEEL

// With align (the default), the whole vectors start where the first contiguous output's vector
// stores are 32-byte aligned (they then carry align = 32 and, with nontemporal, are streaming
// stores); the pieces loop starts at the head, the columns before that point, which goes through
// the scratch vectors like the tail.
// PEEL-LABEL: func.func @softshrink_backward_f32_f32_f32_r1_ccc
// PEEL:       %[[GAP:.*]] = tile.align_offset %out0[%[[C0:.*]]] to 32 : f32
// PEEL:       %[[SUM:.*]] = arith.addi %[[C0]], %[[GAP]] : i64
// PEEL:       %[[PEND:.*]] = arith.minsi %[[SUM]], %[[C1:.*]] : i64
// PEEL:       %[[VEND:vector_end]] = arith.subi %[[C1]], %{{.*}} : i64
// PEEL:       scf.for %piece = %[[ZERO:.*]] to %{{.*}} step %{{.*}} : i64 {
// PEEL-NEXT:    %[[TAIL:.*]] = arith.cmpi eq, %piece, %{{.*}} : i64
// PEEL-NEXT:    %[[LO:.*]] = arith.select %[[TAIL]], %[[VEND]], %[[PEND]] : i64
// PEEL-NEXT:    %[[HI:.*]] = arith.select %[[TAIL]], %[[C1]], %[[VEND]] : i64
// PEEL-NEXT:    %[[HEAD:.*]] = arith.cmpi eq, %piece, %[[ZERO]] : i64
// PEEL-NEXT:    %from = arith.select %[[HEAD]], %[[C0]], %[[LO]] : i64
// PEEL-NEXT:    %{{.*}} = arith.select %[[HEAD]], %[[PEND]], %[[HI]] : i64
// PEEL:         scf.for
// PEEL:           tile.store %{{.*}}, %{{.*}}[%{{.*}}] stride %{{.*}} "contiguous" {align = 32 : i64, nontemporal} : vector<8xf32> -> f32
// PEEL-NEXT:    } {tile.vector}
// PEEL:           tile.store %{{.*}}, %{{.*}}[%{{.*}}] stride %{{.*}} mask %{{.*}} : vector<8xi1> "contiguous" : vector<8xf32> -> f32
// PEEL:       } {tile.pieces}
// PEEL-NOT:   tile.inner

// The column loop becomes pieces (tile.pieces) around one copy of the body, a vector loop of 8
// lanes (tile.vector): the row's whole vectors in place, then its < 8 last columns (the tail)
// through scratch vectors in the frame: masked loads into them, one vector step on them, a
// masked store back. No scalar loop is left. The parameter is splatted once, before the pieces;
// compares give vector<8xi1> masks.

// CHECK-LABEL: func.func @softshrink_backward_f32_f32_f32_r1_ccc
// CHECK:       %[[SG:.*]] = tile.alloca 8 x f32
// CHECK-NEXT:  %[[SX:.*]] = tile.alloca 8 x f32
// CHECK-NEXT:  %[[SO:.*]] = tile.alloca 8 x f32
// CHECK:       %[[LAMBD:.*]] = tile.param %meta[4] : f32
// CHECK:       %[[EIGHT:.*]] = arith.constant 8 : i64
// CHECK:       %[[VEND:vector_end]] = arith.subi %[[C1:.*]], %{{.*}} : i64
// CHECK-NEXT:  %[[SPLAT:.*]] = tile.splat %[[LAMBD]] : f32 -> vector<8xf32>
// CHECK:       scf.for %piece = %[[ONE:.*]] to %{{.*}} step %[[ONE]] : i64 {
// CHECK-NEXT:    %[[TAIL:.*]] = arith.cmpi eq, %piece, %{{.*}} : i64
// CHECK-NEXT:    %from = arith.select %[[TAIL]], %[[VEND]], %{{.*}} : i64
// CHECK-NEXT:    %[[HI:.*]] = arith.select %[[TAIL]], %[[C1]], %[[VEND]] : i64
// CHECK-NEXT:    %masked = arith.cmpi ne, %piece, %[[ONE]] : i64
// CHECK-NEXT:    %count = arith.subi %[[HI]], %from : i64
// CHECK-NEXT:    %copied = arith.select %masked, %count, %[[ZERO:.*]] : i64
// CHECK-NEXT:    %scratched = arith.cmpi sgt, %copied, %[[ZERO]] : i64
// CHECK:         %columns = arith.select %masked, %{{.*}}, %count : i64
// CHECK-NEXT:    %[[GP:.*]] = tile.offset %in0[%from] : f32
// CHECK-NEXT:    %[[XP:.*]] = tile.offset %in1[%from] : f32
// CHECK-NEXT:    %[[OP:.*]] = tile.offset %out0[%from] : f32
// CHECK-NEXT:    scf.if %scratched {
// CHECK-NEXT:      %[[M:.*]] = tile.prefix %copied : i64 -> vector<8xi1>
// CHECK-NEXT:      %[[G:.*]] = tile.load %[[GP]][%[[ZERO]]] stride %{{.*}} mask %[[M]] : vector<8xi1> "contiguous" {fill = 0.000000e+00 : f32} : f32 -> vector<8xf32>
// CHECK-NEXT:      tile.store %[[G]], %[[SG]][%[[ZERO]]] stride %{{.*}} "contiguous" : vector<8xf32> -> f32
// CHECK-NEXT:      %[[X:.*]] = tile.load %[[XP]][%[[ZERO]]] stride %{{.*}} mask %[[M]] : vector<8xi1> "contiguous" {fill = 0.000000e+00 : f32} : f32 -> vector<8xf32>
// CHECK-NEXT:      tile.store %[[X]], %[[SX]][%[[ZERO]]] stride %{{.*}} "contiguous" : vector<8xf32> -> f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[GR:.*]] = arith.select %masked, %[[SG]], %[[GP]] : !llvm.ptr
// CHECK-NEXT:    %[[XR:.*]] = arith.select %masked, %[[SX]], %[[XP]] : !llvm.ptr
// CHECK-NEXT:    %[[OR:.*]] = arith.select %masked, %[[SO]], %[[OP]] : !llvm.ptr
// CHECK-NEXT:    scf.for %[[C:.*]] = %{{.*}} to %columns step %[[EIGHT]] : i64 {
// CHECK-NEXT:      %[[G:.*]] = tile.load %[[GR]][%[[C]]] stride %{{.*}} "contiguous" : f32 -> vector<8xf32>
// CHECK-NEXT:      %[[X:.*]] = tile.load %[[XR]][%[[C]]] stride %{{.*}} "contiguous" : f32 -> vector<8xf32>
// CHECK-NEXT:      %[[A:.*]] = ew.abs %[[X]] : vector<8xf32> -> vector<8xf32>
// CHECK-NEXT:      %[[M:.*]] = ew.cmp "ole" %[[A]], %[[SPLAT]] : vector<8xf32>, vector<8xf32> -> vector<8xi1>
// CHECK-NEXT:      %[[Z:.*]] = ew.constant 0.0 : vector<8xf32>
// CHECK-NEXT:      %[[R:.*]] = ew.select %[[M]], %[[Z]], %[[G]] : vector<8xi1>, vector<8xf32>, vector<8xf32> -> vector<8xf32>
// CHECK-NEXT:      tile.store %[[R]], %[[OR]][%[[C]]] stride %{{.*}} "contiguous" : vector<8xf32> -> f32
// CHECK-NEXT:    } {tile.vector}
// CHECK-NEXT:    scf.if %scratched {
// CHECK-NEXT:      %[[M:.*]] = tile.prefix %copied : i64 -> vector<8xi1>
// CHECK-NEXT:      %[[V:.*]] = tile.load %[[SO]][%[[ZERO]]] stride %{{.*}} "contiguous" : f32 -> vector<8xf32>
// CHECK-NEXT:      tile.store %[[V]], %[[OP]][%[[ZERO]]] stride %{{.*}} mask %[[M]] : vector<8xi1> "contiguous" : vector<8xf32> -> f32
// CHECK-NEXT:    }
// CHECK-NEXT:  } {tile.pieces}
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

// A row kernel's column loop (tile.no_peel) is not peeled: the pieces are the whole vectors and
// the tail. A strided view's tail is a masked gather into its scratch vector, which the body
// then reads with stride 1.

// CHECK-LABEL: func.func @scale_rows
// CHECK:       scf.for %piece = %[[ONE:.*]] to %{{.*}} step %[[ONE]] : i64 {
// CHECK:         %[[AT:.*]] = arith.muli %from, %s : i64
// CHECK-NEXT:    %[[P:.*]] = tile.offset %in0[%[[AT]]] : f32
// CHECK:         scf.if %scratched {
// CHECK-NEXT:      %[[M:.*]] = tile.prefix %copied : i64 -> vector<8xi1>
// CHECK-NEXT:      %[[V:.*]] = tile.load %[[P]][%{{.*}}] stride %s mask %[[M]] : vector<8xi1> "strided" {fill = 0.000000e+00 : f32} : f32 -> vector<8xf32>
// CHECK-NEXT:      tile.store %[[V]], %scratch[%{{.*}}] stride %{{.*}} "contiguous" : vector<8xf32> -> f32
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[ROW:.*]] = arith.select %masked, %scratch, %[[P]] : !llvm.ptr
// CHECK-NEXT:    %[[S:.*]] = arith.select %masked, %[[ONE]], %s : i64
// CHECK:         tile.load %[[ROW]][%{{.*}}] stride %[[S]] "strided" : f32 -> vector<8xf32>
// CHECK:         tile.store %{{.*}}, %{{.*}}[%{{.*}}] stride %{{.*}} mask %{{.*}} : vector<8xi1> "contiguous" : vector<8xf32> -> f32
// CHECK:       } {tile.pieces}
// CHECK-NOT:   tile.inner

// With nontemporal, a row whose output starts on a register boundary and is whole vectors long
// (no columns before the boundary, none after the last vector) streams every store, aligned;
// any other row stores as usual: a streamed line next to an ordinary store to a partial line
// would be fetched again.
// PEEL-LABEL: func.func @scale_rows
// PEEL:       %[[GAP:.*]] = tile.align_offset %out0[%{{.*}}] to 32 : f32
// PEEL-NEXT:  %[[N:.*]] = arith.subi %n, %{{.*}} : i64
// PEEL-NEXT:  %[[REST:.*]] = arith.remsi %[[N]], %{{.*}} : i64
// PEEL-NEXT:  %[[LEFT:.*]] = arith.addi %[[GAP]], %[[REST]] : i64
// PEEL:       %[[WHOLE:.*]] = arith.cmpi eq, %[[LEFT]], %{{.*}} : i64
// PEEL-NEXT:  scf.if %[[WHOLE]] {
// PEEL:         scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} : i64 {
// PEEL:           tile.store %{{.*}} stride %{{.*}} "contiguous" {align = 32 : i64, nontemporal} : vector<8xf32> -> f32
// PEEL-NEXT:    } {tile.vector}
// PEEL-NEXT:  } else {
// PEEL:         scf.for %piece
// PEEL:           scf.for %{{.*}} = %{{.*}} to %columns step %{{.*}} : i64 {
// PEEL:             tile.store %{{.*}} stride %{{.*}} "contiguous" : vector<8xf32> -> f32
// PEEL-NEXT:      } {tile.vector}
// PEEL:           tile.store %{{.*}} mask %{{.*}} : vector<8xi1> "contiguous" : vector<8xf32> -> f32
// PEEL:         } {tile.pieces}
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
