/* After a default-Open-MPI MPI_Allreduce of 64 MiB on other buffers, read one
 * byte of every 4 KiB page of two touched 64 MiB buffers (a, b): time and
 * the minor/major faults the guest kernel counts. THP=1: a and b advised
 * MADV_HUGEPAGE. mpicc -O2 -o t touch_after_mpi.c; mpirun -np 2
 * --bind-to core -x THP=0|1 ./t (docs/PERFORMANCE.md, "Transparent huge
 * pages for the user's buffers"). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/resource.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e3+t.tv_nsec/1e6;}
static long minflt(void){struct rusage r;getrusage(RUSAGE_SELF,&r);return r.ru_minflt;}
static long majflt(void){struct rusage r;getrusage(RUSAGE_SELF,&r);return r.ru_majflt;}
int main(int argc,char**argv){
  MPI_Init(&argc,&argv); int rank; MPI_Comm_rank(MPI_COMM_WORLD,&rank);
  size_t n=64u<<20; char *a=aligned_alloc(2<<20,n),*b=aligned_alloc(2<<20,n); if(getenv("THP")&&atoi(getenv("THP"))){madvise(a,n,MADV_HUGEPAGE);madvise(b,n,MADV_HUGEPAGE);} memset(a,1,n); memset(b,2,n);
  float *x=malloc(n),*y=malloc(n); memset(x,0,n); memset(y,0,n);
  for(int it=0;it<8;it++){
    MPI_Barrier(MPI_COMM_WORLD);
    double t0=now();
    if(it&1) MPI_Allreduce(x,y,n/4,MPI_FLOAT,MPI_SUM,MPI_COMM_WORLD);
    double t1=now();
    MPI_Barrier(MPI_COMM_WORLD);
    long f0=minflt(),m0=majflt(); double t2=now(); volatile char s=0;
    for(size_t i=0;i<n;i+=4096){s+=a[i];} for(size_t i=0;i<n;i+=4096){s+=b[i];}
    double t3=now(); long f1=minflt(),m1=majflt();
    printf("rank %d it %d allreduce=%d %.1f ms; touch %.2f ms minflt %ld majflt %ld\n",rank,it,it&1,t1-t0,t3-t2,f1-f0,m1-m0);
  }
  MPI_Finalize();
}
