/* forkbench (RowClone, MICRO 2013, section 7.2) as a real program: the parent allocates and
   initializes an array of S bytes, forks; the child updates one cache line in each of N
   randomly chosen pages of the array (each write triggers a copy-on-write of that page) and
   exits; the parent waits for it.

   usage: forkbench S N [seed]      S in bytes (rounded up to whole pages), N pages (N <= S/4096)

   The pages are distinct (a partial Fisher-Yates shuffle of the page numbers), so the child
   writes exactly N different pages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096UL
#define LINE 64UL

static unsigned long next_random(unsigned long* state)
{
   /* xorshift64: small, seeded, the same on every machine */
   *state ^= *state << 13;
   *state ^= *state >> 7;
   *state ^= *state << 17;
   return *state;
}

int main(int argc, char** argv)
{
   if (argc < 3) {
      fprintf(stderr, "usage: %s S N [seed]\n", argv[0]);
      return 2;
   }
   unsigned long bytes = strtoul(argv[1], NULL, 0);
   unsigned long pages = (bytes + PAGE - 1) / PAGE;
   unsigned long updates = strtoul(argv[2], NULL, 0);
   unsigned long seed = argc > 3 ? strtoul(argv[3], NULL, 0) : 1;
   if (pages == 0 || updates > pages) {
      fprintf(stderr, "forkbench: need 0 < S and N <= S/4096 (S=%lu, N=%lu)\n", bytes, updates);
      return 2;
   }
   unsigned char* array =
      mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
   if (array == MAP_FAILED) {
      perror("forkbench: mmap");
      return 1;
   }
   memset(array, 0x5a, pages * PAGE);
   /* The page order is chosen before the fork, so the child runs only its updates. */
   unsigned long* order = malloc(pages * sizeof *order);
   if (!order) {
      perror("forkbench: malloc");
      return 1;
   }
   unsigned long state = seed ? seed : 1;
   for (unsigned long i = 0; i < pages; i++)
      order[i] = i;
   for (unsigned long i = 0; i < updates; i++) {
      unsigned long j = i + next_random(&state) % (pages - i);
      unsigned long t = order[i];
      order[i] = order[j];
      order[j] = t;
   }
   pid_t child = fork();
   if (child < 0) {
      perror("forkbench: fork");
      return 1;
   }
   if (child == 0) {
      for (unsigned long i = 0; i < updates; i++) {
         unsigned char* line = array + order[i] * PAGE + (next_random(&state) % (PAGE / LINE)) * LINE;
         for (unsigned long b = 0; b < LINE; b += 8)
            *(volatile unsigned long*)(line + b) += 1;
      }
      _exit(0);
   }
   int status;
   if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "forkbench: the child failed\n");
      return 1;
   }
   return 0;
}
