// The source text of the ahead-of-time runtime (`tilec compile -o`): a C
// header and a C file written next to the kernels' object, which an
// application compiles with its own C compiler. It needs only pthreads: no
// LLVM, no libtilec.
#pragma once

#include <string_view>

namespace tilec::tools {

inline constexpr std::string_view kAotRuntimeHeader = R"(// tilec_aot_runtime.h: the runtime of Tilec's ahead-of-time kernels
// (written by `tilec compile -o`; the same for every program).
#ifndef TILEC_AOT_RUNTIME_H_
#define TILEC_AOT_RUNTIME_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// A kernel's entry point: runs work groups [first_group, last_group) with
// args[i] the address of its buffer i and, after the buffers, the address
// of an int64_t[3] holding the number of groups per dimension.
typedef void (*tilec_aot_group_fn)(void** args, int64_t first_group, int64_t last_group);

// Runs every work group of one kernel launch on the thread pool (started on
// first use: one thread per online CPU, or TILEC_AOT_THREADS) and returns
// when all are done. Launches from several threads run one at a time.
void tilec_aot_launch(tilec_aot_group_fn fn, void** args, const int64_t groups[3]);

// Zero-filled memory aligned to 64 bytes (at least 64 bytes); NULL when out of memory.
void* tilec_aot_alloc(size_t bytes);
void tilec_aot_free(void* p);

// The pool's threads, the caller of tilec_aot_launch included.
int tilec_aot_threads(void);

#ifdef __cplusplus
}
#endif

#endif  // TILEC_AOT_RUNTIME_H_
)";

inline constexpr std::string_view kAotRuntimeSource = R"(// tilec_aot_runtime.c: the thread pool and memory of Tilec's ahead-of-time
// kernels (written by `tilec compile -o`; the same for every program).
// Build with the application: cc -O2 -c tilec_aot_runtime.c; link -lpthread.
#include "tilec_aot_runtime.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// One launch at a time: workers take pieces of contiguous group ids from a
// shared counter, about 8 pieces per thread (as the JIT's pool does), so a
// thread slowed down by another process takes fewer pieces.
static struct {
  pthread_once_t once;
  pthread_mutex_t launch;  // one launch at a time
  pthread_mutex_t mutex;
  pthread_cond_t start, done;
  int threads;
  unsigned long generation;  // bumped per launch
  int pending;               // workers not finished with this launch
  tilec_aot_group_fn fn;
  void** args;
  int64_t total, piece;
  _Atomic int64_t next;
} pool = {PTHREAD_ONCE_INIT, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
          PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER};

static void run_pieces(void) {
  for (;;) {
    int64_t first = atomic_fetch_add_explicit(&pool.next, pool.piece, memory_order_relaxed);
    if (first >= pool.total) return;
    int64_t last = pool.total - first > pool.piece ? first + pool.piece : pool.total;
    pool.fn(pool.args, first, last);
  }
}

static void* worker(void* unused) {
  (void)unused;
  unsigned long seen = 0;
  pthread_mutex_lock(&pool.mutex);
  for (;;) {
    while (pool.generation == seen) pthread_cond_wait(&pool.start, &pool.mutex);
    seen = pool.generation;
    pthread_mutex_unlock(&pool.mutex);
    run_pieces();
    pthread_mutex_lock(&pool.mutex);
    if (--pool.pending == 0) pthread_cond_signal(&pool.done);
  }
  return NULL;
}

static void start_pool(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  const char* env = getenv("TILEC_AOT_THREADS");
  if (env && atoi(env) > 0) n = atoi(env);
  if (n < 1) n = 1;
  if (n > 1024) n = 1024;
  pool.threads = 1;
  for (long i = 1; i < n; ++i) {
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0) break;  // fewer threads, still correct
    pthread_detach(t);
    ++pool.threads;
  }
}

int tilec_aot_threads(void) {
  pthread_once(&pool.once, start_pool);
  return pool.threads;
}

void tilec_aot_launch(tilec_aot_group_fn fn, void** args, const int64_t groups[3]) {
  int64_t total = groups[0] * groups[1] * groups[2];
  if (total <= 0) return;
  int threads = tilec_aot_threads();
  pthread_mutex_lock(&pool.launch);
  if (threads == 1 || total == 1) {
    fn(args, 0, total);
    pthread_mutex_unlock(&pool.launch);
    return;
  }
  int64_t chunks = total < threads ? total : threads;
  pool.fn = fn;
  pool.args = args;
  pool.total = total;
  pool.piece = total / (chunks * 8) > 1 ? total / (chunks * 8) : 1;
  atomic_store(&pool.next, 0);
  pthread_mutex_lock(&pool.mutex);
  pool.pending = threads - 1;
  ++pool.generation;
  pthread_cond_broadcast(&pool.start);
  pthread_mutex_unlock(&pool.mutex);
  run_pieces();
  pthread_mutex_lock(&pool.mutex);
  while (pool.pending > 0) pthread_cond_wait(&pool.done, &pool.mutex);
  pthread_mutex_unlock(&pool.mutex);
  pthread_mutex_unlock(&pool.launch);
}

void* tilec_aot_alloc(size_t bytes) {
  size_t padded = (bytes + 63) / 64 * 64;
  if (padded == 0) padded = 64;
  void* p = aligned_alloc(64, padded);
  if (p) memset(p, 0, padded);
  return p;
}

void tilec_aot_free(void* p) { free(p); }
)";

}  // namespace tilec::tools
