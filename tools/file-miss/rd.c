// One thread reads FILE with random 4 KiB preads, each page once in a random order
// (or COUNT reads, wrapping), and prints the wall and CPU time a read.
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
static double tv(struct timeval t){return t.tv_sec+t.tv_usec/1e6;}
int main(int argc,char**argv){
  int fd=open(argv[1],O_RDONLY); if(fd<0){perror("open");return 1;}
  struct stat st; fstat(fd,&st); long n=st.st_size/4096;
  long count = argc>2 ? atol(argv[2]) : n;
  posix_fadvise(fd,0,0,POSIX_FADV_RANDOM);
  uint32_t *perm=malloc(n*4); for(long i=0;i<n;i++)perm[i]=i;
  uint64_t s=88172645463325252ull;
  for(long i=n-1;i>0;i--){s^=s<<13;s^=s>>7;s^=s<<17;long j=s%(i+1);uint32_t t=perm[i];perm[i]=perm[j];perm[j]=t;}
  char *buf=aligned_alloc(4096,4096);
  struct rusage a,b; struct timespec t0,t1;
  getrusage(RUSAGE_SELF,&a); clock_gettime(CLOCK_MONOTONIC,&t0);
  for(long i=0;i<count;i++){ if(pread(fd,buf,4096,(off_t)perm[i%n]*4096)!=4096){perror("pread");return 1;} }
  clock_gettime(CLOCK_MONOTONIC,&t1); getrusage(RUSAGE_SELF,&b);
  double w=(t1.tv_sec-t0.tv_sec)+(t1.tv_nsec-t0.tv_nsec)/1e9;
  double u=tv(b.ru_utime)-tv(a.ru_utime), sy=tv(b.ru_stime)-tv(a.ru_stime);
  printf("reads %ld wall %.3f s user %.3f s sys %.3f s -> wall %.0f ns, cpu %.0f ns a read; nvcsw %ld\n",count,w,u,sy,w/count*1e9,(u+sy)/count*1e9,b.ru_nvcsw-a.ru_nvcsw);
  return 0;}
