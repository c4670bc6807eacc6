#ifndef CIAPLIBPQ_SHIM_H
#define CIAPLIBPQ_SHIM_H

// PostgreSQL's client library; only files in IAPStoragePostgres/LibPQ/ import it.
#include <libpq-fe.h>

#endif
