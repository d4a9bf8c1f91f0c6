/* mem.h - tracked allocator for tensor memory.
 *
 * Every byte of tensor memory the engine holds (parameters, gradients,
 * optimizer state, the planned activation arena, kernel workspaces) goes
 * through mem_alloc, so that peak_mem_bytes in the result file is a measured
 * number and not an estimate. */
#ifndef MATRIX_ENGINE_MEM_H
#define MATRIX_ENGINE_MEM_H

#include <stddef.h>

/* Allocate bytes (64-byte aligned, zeroed). Returns NULL when the memory is
 * not there, after recording the failed size for mem_failed_bytes(). A request
 * larger than the memory the kernel reports available fails up front, because
 * Linux would otherwise over-commit and kill the process later. */
void *mem_alloc(size_t bytes);
/* Free p, which mem_alloc returned for the same number of bytes. */
void mem_free(void *p, size_t bytes);
size_t mem_current(void);      /* bytes held now */
size_t mem_peak(void);         /* highest mem_current() so far, bytes */
size_t mem_failed_bytes(void); /* size of the last failed request, bytes */
/* Bytes the engine may still take: the kernel's MemAvailable, bounded by
 * the process's limits (RLIMIT_AS, RLIMIT_DATA); 0 when none is known. */
size_t mem_available(void);

#endif
