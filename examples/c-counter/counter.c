/* c-counter: the README's counter as a C app on libjfgui_host, pumped from poll(2).
 * Build: make (after `cargo build -p jfgui-host-capi`). Run: ./c-counter --agent-enable
 * An agent's counter.reset asks on this terminal first (y/a/n); without a terminal it never runs. */
#include <jfgui_host.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STR(s) (const uint8_t *)(s), strlen(s)
#define IS(name, len, lit) ((len) == strlen(lit) && memcmp((name), (lit), (len)) == 0)
#define UNDO_MAX 64

static const char ACTIONS[] = "["
    "{\"name\":\"counter.get\",\"description\":\"Read the counter.\",\"kind\":\"read\"},"
    "{\"name\":\"counter.add\",\"description\":\"Add to the counter (it stays within -1000..1000).\","
    "\"kind\":\"write\",\"undo\":true,\"transaction\":\"counter\",\"inputSchema\":{\"type\":\"object\","
    "\"properties\":{\"by\":{\"type\":\"integer\",\"minimum\":-1000,\"maximum\":1000}},"
    "\"required\":[\"by\"],\"additionalProperties\":false}},"
    "{\"name\":\"counter.undo\",\"description\":\"Undo the last change.\",\"kind\":\"write\"},"
    "{\"name\":\"counter.reset\",\"description\":\"Set the counter to 0 (undoable). The user is asked first: the "
    "call answers with a task that waits for their answer; follow it with tasks/get, do not retry.\","
    "\"kind\":\"write\",\"undo\":true,\"transaction\":\"counter\",\"title\":\"Reset the counter\",\"confirm\":true}]";

struct state { long value, undo[UNDO_MAX]; int depth; uint64_t revision; };
/* A call waiting for the user's answer on the terminal: its ticket, whether "always" may be offered. */
struct asked { char ticket[129]; size_t len; bool may_always; };
#define ASKED_MAX 16 /* the library lets at most 16 calls wait */
struct counter { struct state now, before_batch; struct asked asked[ASKED_MAX]; int asking; };
static volatile sig_atomic_t stop;
static int wake[2]; /* the signal handler writes here, so a signal between two polls is not lost */

static void set(struct state *s, long value) { s->value = value; s->revision++; }
static void execute(void *user, const uint8_t *action, size_t len, const uint8_t *input,
                    size_t input_len, const JfguiCallInfo *info, JfguiReply *reply) {
    struct state *s = &((struct counter *)user)->now;
    char text[64];
    (void)info;
    if (IS(action, len, "counter.add")) { /* input: {"by":N}, already checked against the schema */
        snprintf(text, sizeof text, "%.*s", (int)input_len, (const char *)input);
        long next = s->value + strtol(strchr(text, ':') + 1, NULL, 10);
        if (next < -1000 || next > 1000) {
            jfgui_reply_error(reply, STR("out_of_range"), STR("the counter stays within -1000..1000"));
            return;
        }
        if (s->depth == UNDO_MAX) memmove(s->undo, s->undo + 1, --s->depth * sizeof *s->undo);
        s->undo[s->depth++] = s->value;
        set(s, next);
    } else if (IS(action, len, "counter.reset")) {
        if (s->depth == UNDO_MAX) memmove(s->undo, s->undo + 1, --s->depth * sizeof *s->undo);
        s->undo[s->depth++] = s->value;
        set(s, 0);
    } else if (IS(action, len, "counter.undo")) {
        if (s->depth == 0) {
            jfgui_reply_error(reply, STR("nothing_to_undo"), STR("there is nothing to undo"));
            return;
        }
        set(s, s->undo[--s->depth]);
    }
    snprintf(text, sizeof text, "{\"value\":%ld}", s->value);
    jfgui_reply_json(reply, STR(text));
}
static uint64_t revision(void *user) { return ((struct counter *)user)->now.revision; }
static void inspect(void *user, const uint8_t *in, size_t len, JfguiReply *reply) {
    execute(user, STR("counter.get"), in, len, NULL, reply);
}
/* Atomic batches: keep the state to roll back to; a commit leaves one undo step. */
static bool supports(void *user, const uint8_t *d, size_t len) { (void)user; return IS(d, len, "counter"); }
static void begin(void *user, const JfguiStr *d, size_t n, JfguiReply *reply) {
    struct counter *c = user;
    (void)d; (void)n; (void)reply;
    c->before_batch = c->now;
}
static void rollback(void *user) { struct counter *c = user; c->now = c->before_batch; }
static void commit(void *user) {
    struct counter *c = user;
    c->now.depth = c->before_batch.depth < UNDO_MAX ? c->before_batch.depth : UNDO_MAX - 1;
    c->now.undo[c->now.depth++] = c->before_batch.value;
}
static void on_signal(int sig) { (void)sig; stop = 1; (void)!write(wake[1], "", 1); }

/* Consent: the oldest waiting call is shown on stderr and answered with a line on stdin. */
static void show(struct counter *c) {
    if (c->asking > 0)
        fprintf(stderr, "c-counter: allow? [y]es once%s, [n]o > ", c->asked[0].may_always ? ", [a]lways" : "");
}
static int32_t confirm(void *user, const JfguiConfirmation *q) {
    struct counter *c = user;
    if (!isatty(STDIN_FILENO) || !isatty(STDERR_FILENO) || c->asking == ASKED_MAX || q->ticket.len > 128)
        return JFGUI_ANSWER_NO_UI; /* nobody to ask */
    struct asked *a = &c->asked[c->asking++];
    memcpy(a->ticket, q->ticket.ptr, a->len = q->ticket.len);
    a->may_always = q->may_always;
    fprintf(stderr, "\nc-counter: %.*s wants to: %.*s\n    who: %.*s\n", (int)q->agent_name.len,
            (const char *)q->agent_name.ptr, (int)q->summary.len, (const char *)q->summary.ptr,
            (int)q->agent_label.len, (const char *)q->agent_label.ptr);
    if (c->asking == 1) show(c);
    return JFGUI_ANSWER_LATER;
}
static void forget(struct counter *c, int i) {
    memmove(&c->asked[i], &c->asked[i + 1], (size_t)(--c->asking - i) * sizeof *c->asked);
}
static void withdraw(void *user, const uint8_t *ticket, size_t len) {
    struct counter *c = user;
    for (int i = 0; i < c->asking; i++)
        if (c->asked[i].len == len && memcmp(c->asked[i].ticket, ticket, len) == 0) {
            fprintf(stderr, "\nc-counter: %.*s is no longer asked about\n", (int)len, (const char *)ticket);
            forget(c, i);
            show(c);
            return;
        }
}
/* A line typed while asking: y, a (when offered) or n answers the oldest call. */
static void typed(JfguiHost *h, struct counter *c, const char *line) {
    int32_t answer = line[0] == 'y' ? JFGUI_ANSWER_ALLOW : line[0] == 'n' ? JFGUI_ANSWER_DENY
                   : line[0] == 'a' && c->asked[0].may_always ? JFGUI_ANSWER_ALLOW_ALWAYS : -1;
    if (answer < 0) { show(c); return; }
    struct asked a = c->asked[0];
    forget(c, 0);
    jfgui_host_answer(h, (const uint8_t *)a.ticket, a.len, answer); /* a yes runs it now */
    show(c);
}

int main(int argc, char **argv) {
    struct counter c = {.now = {.revision = 1}};
    JfguiCallbacks cb = {.execute = execute, .revision = revision, .inspect = inspect,
                         .supports_transaction = supports, .begin_transaction = begin,
                         .commit_transaction = commit, .rollback_transaction = rollback,
                         .confirm = confirm, .withdraw_confirmation = withdraw};
    JfguiHost *h = NULL;
    bool headless = false;
    if (jfgui_host_new(JFGUI_HOST_ABI_VERSION, STR("C Counter"), &cb, &c, &h) != JFGUI_STATUS_OK ||
        jfgui_host_declare_actions(h, STR(ACTIONS)) != JFGUI_STATUS_OK) {
        fprintf(stderr, "c-counter: cannot declare the actions\n");
        jfgui_host_close(h);
        return 1;
    }
    jfgui_headless_requested(&headless);
    if (headless) { /* started by `jfgui-agent headless`: the host channel on stdin/stdout */
        int status = jfgui_host_serve_stdio(h);
        return jfgui_host_close(h) || status;
    }
    bool enabled = argc > 1 && strcmp(argv[1], "--agent-enable") == 0;
    jfgui_host_set_enabled(h, enabled);
    /* The loop below prints nothing until it ends: say that it runs and how to reach it. */
    fprintf(stderr, "c-counter: running as C Counter, agent access %s; `jfgui-agent list` shows it "
                    "once jfgui-agentd runs; Ctrl-C stops\n",
            enabled ? "on" : "off (start with --agent-enable)");
    struct sigaction sa = {.sa_handler = on_signal};
    if (pipe(wake) != 0) return 1;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    JfguiWait w;
    char line[256];
    size_t got = 0;
    jfgui_host_connect(h);
    while (!stop && jfgui_host_pump(h, JFGUI_HOST_DEFAULT_BUDGET, &w) == JFGUI_STATUS_OK) {
        struct pollfd p[3] = {{.fd = w.fd, .events = (w.read ? POLLIN : 0) | (w.write ? POLLOUT : 0)},
                              {.fd = wake[0], .events = POLLIN}, /* fd -1 is skipped */
                              {.fd = c.asking ? STDIN_FILENO : -1, .events = POLLIN}};
        poll(p, 3, w.timeout_ms > INT_MAX ? INT_MAX : (int)w.timeout_ms);
        if (p[2].revents & (POLLIN | POLLHUP)) {
            ssize_t n = read(STDIN_FILENO, line + got, sizeof line - 1 - got);
            if (n <= 0) { /* the terminal is gone: nobody can answer any more */
                while (c.asking) { struct asked a = c.asked[0]; forget(&c, 0);
                    jfgui_host_answer(h, (const uint8_t *)a.ticket, a.len, JFGUI_ANSWER_NO_UI); }
                continue;
            }
            got += (size_t)n;
            line[got] = 0;
            char *end = strchr(line, '\n');
            if (end || got == sizeof line - 1) {
                if (end) *end = 0;
                if (c.asking) typed(h, &c, line);
                got = 0;
            }
        }
    }
    close(wake[0]);
    close(wake[1]);
    return jfgui_host_close(h);
}
