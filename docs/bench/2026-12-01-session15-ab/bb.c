#define _GNU_SOURCE
#include <mpi.h>
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec*1e-3;}
int main(int argc,char**argv){
  MPI_Init(&argc,&argv); int r; MPI_Comm_rank(MPI_COMM_WORLD,&r);
  HcclComm c; HcclCommInitMpi(MPI_COMM_WORLD,&c);
  int N=atoi(argv[1]), coll=atoi(argv[2]), reps=argc>3?atoi(argv[3]):5;
  float in[64],out[64]; for(int i=0;i<64;i++)in[i]=r+i;
  for(int rep=0;rep<reps;rep++){
  MPI_Barrier(MPI_COMM_WORLD); double t0=now();
  for(int i=0;i<N;i++){ if(coll==0)HcclAllReduce(in,out,2,HCCL_DATA_TYPE_FP32,HCCL_REDUCE_SUM,c,NULL); else if(coll==1) HcclBroadcast(in,2,HCCL_DATA_TYPE_FP32,0,c,NULL); else if(coll==2) MPI_Allreduce(in,out,2,MPI_FLOAT,MPI_SUM,MPI_COMM_WORLD); else MPI_Bcast(in,2,MPI_FLOAT,0,MPI_COMM_WORLD);}
  double t1=now(); MPI_Barrier(MPI_COMM_WORLD);
  if(r==0) printf("coll %d: %.3f us/call\n",coll,(t1-t0)/N);}
  HcclCommDestroy(c); MPI_Finalize(); return 0;}
