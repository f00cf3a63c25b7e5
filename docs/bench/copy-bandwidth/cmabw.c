/* cmabw: process_vm_readv of a peer's touched buffer vs memcpy, same sizes, one process reading */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <signal.h>
#include <sys/uio.h>
#include <sys/wait.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  size_t n=(size_t)atol(argv[1])<<10; int it=atoi(argv[2]); int cpu=argc>3?atoi(argv[3]):0;
  int pfd[2]; pipe(pfd);
  pid_t c=fork();
  if(c==0){cpu_set_t s;CPU_ZERO(&s);CPU_SET(1-cpu,&s);sched_setaffinity(0,sizeof s,&s);
    char*b=malloc(n); memset(b,3,n); write(pfd[1],&b,sizeof b); pause(); _exit(0);}
  cpu_set_t s;CPU_ZERO(&s);CPU_SET(cpu,&s);sched_setaffinity(0,sizeof s,&s);
  char*rb; read(pfd[0],&rb,sizeof rb);
  char*a=malloc(n),*d=malloc(n); memset(a,1,n); memset(d,2,n);
  double t[400],u[400];
  for(int i=0;i<it+2;i++){struct iovec l={d,n},r={rb,n}; double t0=now(); ssize_t g=process_vm_readv(c,&l,1,&r,1,0); t[i<2?0:i-2]=now()-t0; if(g!=(ssize_t)n){perror("pvr");return 1;}}
  for(int i=0;i<it+2;i++){double t0=now(); memcpy(d,a,n); u[i<2?0:i-2]=now()-t0;}
  qsort(t,it,sizeof(double),cmp); qsort(u,it,sizeof(double),cmp);
  printf("%8zu KiB: process_vm_readv %.1f us (%.1f GB/s), memcpy %.1f us (%.1f GB/s)\n", n>>10, t[it/2]*1e6, n/t[it/2]/1e9, u[it/2]*1e6, n/u[it/2]/1e9);
  kill(c,SIGKILL); wait(NULL); return 0;}
