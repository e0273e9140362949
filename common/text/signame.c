/* Signal names and numbers (common/text/signame.h). */
#include "common/text/signame.h"

#include <signal.h>
#include <string.h>
#include <strings.h>

static const struct {
    const char *name;
    int number;
} signals[] = {
    {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"ABRT", SIGABRT},
    {"KILL", SIGKILL}, {"ALRM", SIGALRM}, {"TERM", SIGTERM}, {"USR1", SIGUSR1},
    {"USR2", SIGUSR2}, {"CONT", SIGCONT}, {"STOP", SIGSTOP}, {"TSTP", SIGTSTP},
    {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU}, {"URG", SIGURG},   {"XCPU", SIGXCPU},
};

static int parse_number(const char *s, size_t len)
{
    int n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        n = n * 10 + (s[i] - '0');
        if (n > SIGNAME_MAX)
            return -1;
    }
    return n >= 1 ? n : -1;
}

int signame_parse(const char *s, size_t len)
{
    if (len == 0)
        return -1;
    if (s[0] >= '0' && s[0] <= '9')
        return parse_number(s, len);
    if (len > 3 && !strncasecmp(s, "SIG", 3)) {
        s += 3;
        len -= 3;
    }
    for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
        if (strlen(signals[i].name) == len && !strncasecmp(s, signals[i].name, len))
            return signals[i].number;
    return -1;
}
