#define _GNU_SOURCE
#include <mpi.h>
#define _GNU_SOURCE
#include <hccl/hccl.h>
#include <hccl/hccl_mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sched.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec*1e-3;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  MPI_Init(&argc,&argv); int r,n; MPI_Comm_rank(MPI_COMM_WORLD,&r); MPI_Comm_size(MPI_COMM_WORLD,&n);
  HcclComm c; if(HcclCommInitMpi(MPI_COMM_WORLD,&c)!=0) return 1;
  int N=atoi(argc>1?argv[1]:"20000"); int coll=argc>2?atoi(argv[2]):0;
  float buf[64]; float out[64]; for(int i=0;i<64;i++)buf[i]=r;
  double *th=malloc(N*8),*tm=malloc(N*8);
  for(int it=0;it<2000;it++){ MPI_Barrier(MPI_COMM_WORLD); if(coll==0)HcclBroadcast(buf,2,HCCL_DATA_TYPE_FP32,0,c,NULL); else HcclAllReduce(buf,out,2,HCCL_DATA_TYPE_FP32,HCCL_REDUCE_SUM,c,NULL);
    MPI_Barrier(MPI_COMM_WORLD); if(coll==0)MPI_Bcast(buf,2,MPI_FLOAT,0,MPI_COMM_WORLD); else MPI_Allreduce(buf,out,2,MPI_FLOAT,MPI_SUM,MPI_COMM_WORLD);}
  for(int it=0;it<N;it++){ MPI_Barrier(MPI_COMM_WORLD); double t0=now(); if(coll==0)HcclBroadcast(buf,2,HCCL_DATA_TYPE_FP32,0,c,NULL); else HcclAllReduce(buf,out,2,HCCL_DATA_TYPE_FP32,HCCL_REDUCE_SUM,c,NULL); th[it]=now()-t0;
    MPI_Barrier(MPI_COMM_WORLD); t0=now(); if(coll==0)MPI_Bcast(buf,2,MPI_FLOAT,0,MPI_COMM_WORLD); else MPI_Allreduce(buf,out,2,MPI_FLOAT,MPI_SUM,MPI_COMM_WORLD); tm[it]=now()-t0;}
  double *mh=malloc(N*8),*mm=malloc(N*8);
  MPI_Reduce(th,mh,N,MPI_DOUBLE,MPI_MAX,0,MPI_COMM_WORLD); MPI_Reduce(tm,mm,N,MPI_DOUBLE,MPI_MAX,0,MPI_COMM_WORLD);
  qsort(th,N,8,cmp); qsort(tm,N,8,cmp);
  for(int k=0;k<n;k++){ MPI_Barrier(MPI_COMM_WORLD); if(k==r) printf("rank %d cpu %d: hcomm p10 %.3f p50 %.3f p90 %.3f | mpi p10 %.3f p50 %.3f p90 %.3f\n",r,sched_getcpu(),th[N/10],th[N/2],th[9*N/10],tm[N/10],tm[N/2],tm[9*N/10]); fflush(stdout);}
  if(r==0){qsort(mh,N,8,cmp);qsort(mm,N,8,cmp);printf("slowest: hcomm p50 %.3f mpi p50 %.3f\n",mh[N/2],mm[N/2]);}
  HcclCommDestroy(c); MPI_Finalize(); return 0;}
