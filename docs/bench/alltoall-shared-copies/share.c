/* 2-process AlltoAll-like exchange: self copy + incoming block via CMA.
 * mode 0: each reads its own incoming block (static)
 * mode 1: chunks of both transfers claimed dynamically (readv own, writev peer's) */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct { volatile uint64_t cnt[2]; volatile uint64_t bar[2]; volatile uint64_t addr[2][2]; volatile int pid[2]; double t[2][64]; } shared_t;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void barrier(shared_t *s, int me, uint64_t e){ __atomic_store_n(&s->bar[me], e, __ATOMIC_RELEASE); while (__atomic_load_n(&s->bar[1-me], __ATOMIC_ACQUIRE) < e) sched_yield(); }
static long claim(volatile uint64_t *c, uint64_t ep, long n){ for(;;){ uint64_t v=__atomic_load_n(c,__ATOMIC_ACQUIRE); uint64_t cur=(v>>32)==ep?(uint32_t)v:0; if((long)cur>=n) return -1; if(__atomic_compare_exchange_n(c,&v,(ep<<32)|(cur+1),0,__ATOMIC_ACQ_REL,__ATOMIC_ACQUIRE)) return (long)cur; } }
int main(int argc,char**argv){
  size_t blk = (size_t)atol(argv[1]); int mode=atoi(argv[2]); size_t ch = argc>3? (size_t)atol(argv[3]) : 256<<10; int iters=argc>4?atoi(argv[4]):50;
  shared_t *s = mmap(NULL, sizeof *s, PROT_READ|PROT_WRITE, MAP_SHARED|MAP_ANONYMOUS, -1, 0);
  memset((void*)s,0,sizeof *s);
  int me = fork()==0 ? 1 : 0;
  cpu_set_t cs; CPU_ZERO(&cs); CPU_SET(me,&cs); sched_setaffinity(0,sizeof cs,&cs);
  char *snd = malloc(2*blk), *rcv = malloc(2*blk);
  memset(snd, me+1, 2*blk); memset(rcv, 0, 2*blk);
  s->addr[me][0]=(uintptr_t)snd; s->addr[me][1]=(uintptr_t)rcv; s->pid[me]=getpid();
  const int peer=1-me; barrier(s,me,1);
  pid_t pp = s->pid[peer];
  long nch = (long)((blk+ch-1)/ch);
  for(int it=0; it<iters; it++){
    uint64_t ep = it+2;
    barrier(s,me,2*ep);
    double t0=now();
    memcpy(rcv+me*blk, snd+me*blk, blk);
    if(mode==0){
      struct iovec l={rcv+peer*blk,blk}, r={(void*)(uintptr_t)(s->addr[peer][0]+me*blk),blk};
      process_vm_readv(pp,&l,1,&r,1,0);
    } else {
      long c; /* own incoming first */
      while((c=claim(&s->cnt[me],ep,nch))>=0){ size_t o=c*ch, n=blk-o<ch?blk-o:ch;
        struct iovec l={rcv+peer*blk+o,n}, r={(void*)(uintptr_t)(s->addr[peer][0]+me*blk+o),n}; process_vm_readv(pp,&l,1,&r,1,0);}
      while((c=claim(&s->cnt[peer],ep,nch))>=0){ size_t o=c*ch, n=blk-o<ch?blk-o:ch;
        struct iovec l={snd+peer*blk+o,n}, r={(void*)(uintptr_t)(s->addr[peer][1]+me*blk+o),n}; process_vm_writev(pp,&l,1,&r,1,0);}
    }
    double t1=now();
    barrier(s,me,2*ep+1);
    double t2=now();
    if(it<64) s->t[me][it]=t2-t0;
  }
  if(me==1){ _exit(0);} wait(NULL);
  /* median of max over ranks */
  double v[64]; int n=iters<64?iters:64; for(int i=0;i<n;i++) v[i]= s->t[0][i]>s->t[1][i]?s->t[0][i]:s->t[1][i];
  for(int i=0;i<n;i++)for(int j=i+1;j<n;j++) if(v[j]<v[i]){double x=v[i];v[i]=v[j];v[j]=x;}
  printf("blk %zu mode %d chunk %zu: median %.1f us\n", blk, mode, ch, v[n/2]*1e6);
  return 0;
}
