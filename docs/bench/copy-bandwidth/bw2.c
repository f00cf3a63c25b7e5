/* bw2: per-process memcpy rate with P processes copying at once (each bound to cpu i % ncpu) */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){
  int P=atoi(argv[1]); size_t n=(size_t)atol(argv[2])<<20; int it=atoi(argv[3]);
  double start=now()+2.5;
  for(int p=0;p<P;p++) if(fork()==0){
    cpu_set_t s; CPU_ZERO(&s); CPU_SET((p+(argc>4?atoi(argv[4]):0))%2,&s); sched_setaffinity(0,sizeof s,&s);
    char*a=malloc(n),*b=malloc(n); memset(a,1,n); memset(b,2,n);
    double t[200]; while(now()<start); for(int i=0;i<3;i++) memcpy(b,a,n);
    for(int i=0;i<it;i++){double t0=now(); memcpy(b,a,n); t[i]=now()-t0;}
    qsort(t,it,sizeof(double),cmp);
    char m[128]; int l=snprintf(m,sizeof m,"proc %d cpu %d: median %.2f ms, %.1f GB/s copied\n",p,p%2,t[it/2]*1e3,n/t[it/2]/1e9);
    write(1,m,l); _exit(0);}
  for(int p=0;p<P;p++) wait(NULL);
  return 0;}
