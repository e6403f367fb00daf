#ifndef SPOTTER_CLIBUV_SHIM_H
#define SPOTTER_CLIBUV_SHIM_H
#include <uv.h>
#include <stdlib.h>
#include <string.h>

/* libuv's handle and request sizes are macros or enum-valued functions;
   these wrappers give Swift one stable spelling for allocating them. */
static inline size_t spotter_uv_tcp_size(void) { return sizeof(uv_tcp_t); }
static inline size_t spotter_uv_write_size(void) { return sizeof(uv_write_t); }

/* uv_loop_configure is variadic, which Swift cannot call: turns on uv_metrics_idle_time (IterationMeter). */
static inline int spotter_uv_measure_idle_time(uv_loop_t *loop) { return uv_loop_configure(loop, UV_METRICS_IDLE_TIME); }

/* uv_buf_init with Swift-friendly argument types. */
static inline uv_buf_t spotter_uv_buf(void *base, size_t len) {
    return uv_buf_init((char *)base, (unsigned int)len);
}
/* Bytes in the kernel's send queue of a socket, not yet acknowledged by
   the peer (SIOCOUTQ, which Linux spells TIOCOUTQ for sockets too), or -1.
   ioctl is variadic, which Swift cannot call. */
#if defined(__linux__)
#include <sys/ioctl.h>
#include <sys/socket.h>
static inline int spotter_socket_unsent_bytes(int fd) {
    int count = 0;
    return ioctl(fd, TIOCOUTQ, &count) == 0 ? count : -1;
}
#else
static inline int spotter_socket_unsent_bytes(int fd) { (void)fd; return -1; }
#endif
#endif
