#ifndef SPOTTER_CLIBPQ_SHIM_H
#define SPOTTER_CLIBPQ_SHIM_H
/* PostgreSQL's C client (Debian libpq-dev): the cluster store's connection. */
#include <libpq-fe.h>
#endif
