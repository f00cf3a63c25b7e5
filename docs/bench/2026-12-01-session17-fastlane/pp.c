#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include <immintrin.h>
static volatile uint64_t *fa, *fb;
static int mode; static long N=200000;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
static inline void put(volatile uint64_t *p, uint64_t v){
  switch(mode){
  case 0: *p=v; break;
  case 1: *p=v; _mm_clwb((void*)p); break;
  case 2: *p=v; _mm_clflushopt((void*)p); break;
  case 3: _directstoreu_u64((void*)p, v); break;
  }
}
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static void *peer(void*x){pin(1); for(long i=1;i<=N;i++){ while(*fa<i) _mm_pause(); put(fb,i);} return 0;}
int main(int argc,char**argv){
  mode=atoi(argv[1]);
  char *m=aligned_alloc(4096,8192); fa=(uint64_t*)m; fb=(uint64_t*)(m+4096); *fa=*fb=0;
  pthread_t t; pthread_create(&t,0,peer,0); pin(0);
  double t0=now();
  for(long i=1;i<=N;i++){ put(fa,i); while(*fb<i) _mm_pause(); }
  double t1=now(); pthread_join(t,0);
  printf("mode %d: %.1f ns one way\n",mode,(t1-t0)/N/2);
}
