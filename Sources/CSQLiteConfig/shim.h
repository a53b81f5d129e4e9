#include <sqlite3.h>

/* sqlite3_config is variadic, which Swift cannot call. It takes effect only before SQLite
 * initializes (the first connection opened); afterwards it returns SQLITE_MISUSE. */

/* Turns SQLite's memory statistics on or off. On (the default), every allocation of every
 * connection takes one process-wide mutex to count itself: connections working on two
 * threads at once queue there. */
static inline int csqlite_config_memstatus(int on)
{
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, on);
}
