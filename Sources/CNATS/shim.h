#ifndef SPOTTER_CNATS_SHIM_H
#define SPOTTER_CNATS_SHIM_H
/* The NATS C client (Debian libnats-dev): the cluster broker's connection. */
#include <nats/nats.h>
#endif
