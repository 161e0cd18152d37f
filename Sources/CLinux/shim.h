// The kernel's own netlink and sock_diag structs and constants, which Glibc's module leaves
// out: the platform layer builds its requests and sockets from them instead of copies.
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>

// Macros Swift cannot import as written (combinations of other macros).
static const unsigned short CLinux_NLM_F_REQUEST = NLM_F_REQUEST;
static const unsigned short CLinux_NLM_F_DUMP = NLM_F_DUMP;
static const int CLinux_SOL_NETLINK = SOL_NETLINK;
