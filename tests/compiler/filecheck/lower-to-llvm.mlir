// RUN: aclgen opt %s -p lower-to-llvm | filecheck %s
// RUN: aclgen opt %s -p lower-to-llvm | filecheck %s --check-prefix=NONE

// The cf-level f32 ThresholdBackward kernel (8 lanes) becomes an llvm.func: launch-record reads
// and every element access go through GEPs with an explicit alignment equal to the element size
// (numpy buffers are only element-aligned), vector compares give vector<8xi1> masks
// (llvmx.fcmp) and selects take them (llvmx.select). No tile/ew/func/cf/arith op is left.

// CHECK-NOT:   func.func
// CHECK:       llvm.func @threshold_backward_f32_f32_f32_r1_ccc(%in0: !llvm.ptr, %in1: !llvm.ptr, %out0: !llvm.ptr, %meta: !llvm.ptr, %begin: i64, %end: i64)
// CHECK:       %[[P:.*]] = llvm.getelementptr %meta[4] : (!llvm.ptr) -> !llvm.ptr, i64
// CHECK-NEXT:  %[[T:.*]] = llvm.load %[[P]] {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK:       %[[U:.*]] = llvm.insertelement %[[T]], %{{.*}} : vector<8xf32>
// CHECK-NEXT:  %[[SPLAT:.*]] = llvm.shufflevector %[[U]], %{{.*}} [0, 0, 0, 0, 0, 0, 0, 0] : vector<8xf32>
// CHECK:       %[[GP:.*]] = llvm.getelementptr %in0[%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, f32
// CHECK-NEXT:  %[[G:.*]] = llvm.load %[[GP]] {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK:       %[[X:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK-NEXT:  %[[M:.*]] = llvmx.fcmp "ole" %[[X]], %[[SPLAT]] : vector<8xf32>, vector<8xf32> -> vector<8xi1>
// CHECK:       %[[R:.*]] = llvmx.select %[[M]], %{{.*}}, %[[G]] : vector<8xi1>, vector<8xf32>, vector<8xf32> -> vector<8xf32>
// CHECK:       llvm.store %[[R]], %{{.*}} {alignment = 4 : i64} : vector<8xf32>, !llvm.ptr
// The scalar tail:
// CHECK:       llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK:       llvmx.fcmp "ole" %{{.*}}, %[[T]] : f32, f32 -> i1
// CHECK:       llvmx.select %{{.*}}, %{{.*}}, %{{.*}} : i1, f32, f32 -> f32
// CHECK:       llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr
// CHECK:       llvm.return
// NONE-NOT:    {{(= |^ *)(tile|ew|func|cf|arith|scf)\.[a-z_]+}}
builtin.module {
  func.func @threshold_backward_f32_f32_f32_r1_ccc(%in0: !llvm.ptr, %in1: !llvm.ptr, %out0: !llvm.ptr, %meta: !llvm.ptr, %begin: i64, %end: i64) attributes {tile.size = 8192 : i64} {
    %dim_n = tile.param %meta[0] : i64
    %0 = tile.param %meta[1] : i64
    %1 = tile.param %meta[2] : i64
    %2 = tile.param %meta[3] : i64
    %3 = tile.param %meta[4] : f32
    %4 = arith.constant 1 : i64
    %5 = arith.constant 8192 : i64
    %6 = arith.constant 8 : i64
    cf.br ^bb1(%begin : i64)
  ^bb1(%7: i64):
    %8 = arith.cmpi slt, %7, %end : i64
    cf.cond_br %8, ^bb2, ^bb12
  ^bb2:
    %9 = arith.addi %7, %5 : i64
    %10 = arith.minsi %9, %end : i64
    %11 = arith.divsi %7, %dim_n : i64
    %12 = arith.subi %10, %4 : i64
    %13 = arith.divsi %12, %dim_n : i64
    %14 = arith.addi %13, %4 : i64
    cf.br ^bb3(%11 : i64)
  ^bb3(%15: i64):
    %16 = arith.cmpi slt, %15, %14 : i64
    cf.cond_br %16, ^bb4, ^bb11
  ^bb4:
    %17 = arith.muli %15, %dim_n : i64
    %18 = arith.maxsi %7, %17 : i64
    %19 = arith.subi %18, %17 : i64
    %20 = arith.addi %17, %dim_n : i64
    %21 = arith.minsi %10, %20 : i64
    %22 = arith.subi %21, %17 : i64
    %23 = arith.subi %22, %19 : i64
    %24 = arith.remsi %23, %6 : i64
    %vector_end = arith.subi %22, %24 : i64
    %25 = tile.splat %3 : f32 -> vector<8xf32>
    cf.br ^bb5(%19 : i64)
  ^bb5(%26: i64):
    %27 = arith.cmpi slt, %26, %vector_end : i64
    cf.cond_br %27, ^bb6, ^bb7
  ^bb6:
    %28 = tile.load %in0[%26] stride %0 "contiguous" : f32 -> vector<8xf32>
    %29 = tile.load %in1[%26] stride %1 "contiguous" : f32 -> vector<8xf32>
    %30 = ew.cmp "ole" %29, %25 : vector<8xf32>, vector<8xf32> -> vector<8xi1>
    %31 = ew.constant 0.0 : vector<8xf32>
    %32 = ew.select %30, %31, %28 : vector<8xi1>, vector<8xf32>, vector<8xf32> -> vector<8xf32>
    tile.store %32, %out0[%26] stride %2 "contiguous" : vector<8xf32> -> f32
    %33 = arith.addi %26, %6 : i64
    cf.br ^bb5(%33 : i64)
  ^bb7:
    cf.br ^bb8(%vector_end : i64)
  ^bb8(%34: i64):
    %35 = arith.cmpi slt, %34, %22 : i64
    cf.cond_br %35, ^bb9, ^bb10
  ^bb9:
    %36 = tile.load %in0[%34] stride %0 "contiguous" : f32 -> f32
    %37 = tile.load %in1[%34] stride %1 "contiguous" : f32 -> f32
    %38 = ew.cmp "ole" %37, %3 : f32, f32 -> i1
    %39 = ew.constant 0.0 : f32
    %40 = ew.select %38, %39, %36 : i1, f32, f32 -> f32
    tile.store %40, %out0[%34] stride %2 "contiguous" : f32 -> f32
    %41 = arith.addi %34, %4 : i64
    cf.br ^bb8(%41 : i64)
  ^bb10:
    %42 = arith.addi %15, %4 : i64
    cf.br ^bb3(%42 : i64)
  ^bb11:
    %43 = arith.addi %7, %5 : i64
    cf.br ^bb1(%43 : i64)
  ^bb12:
    func.return
  }
}