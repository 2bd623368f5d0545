/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * options.c - the argp table and its parser.  Records what was asked and
 * rejects what is malformed; it neither parses node lists against the
 * system nor touches /proc or the kernel.
 */
#include "config.h"

#include <argp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat.h"
#include "options.h"
#include "text.h"

const char *argp_program_version = PACKAGE_NAME " " PACKAGE_VERSION "\n"
	"Copyright (C) 2026 the pidmempolicy developers.\n"
	"License GPL-2.0-or-later: GNU GPL version 2 or later <https://gnu.org/licenses/gpl.html>.\n"
	"This is free software: you are free to change and redistribute it.\n"
	"There is NO WARRANTY, to the extent permitted by law.";

enum {
	OPT_PREFERRED = 0x100,
	OPT_DEFAULT,
	OPT_STATIC,
	OPT_RELATIVE,
	OPT_JSON,
	OPT_MIGRATE_ONLY,
	OPT_CGROUP,
	OPT_BACKEND,
	OPT_ALLOW_SECCOMP,
	OPT_NO_SIGNAL,
	OPT_USAGE,
	OPT_NOHEADINGS,
	OPT_RAW,
	OPT_UNIT,
	OPT_RATE,
	OPT_MIGRATE_SHARED,
};

static const struct argp_option option_table[] = {
	{ NULL, 0, NULL, 0, "Targets:", 1 },
	{ "pid", 'p', "PID[:INODE][,...]", 0,
	  "the process to change; repeatable, or a comma list. PID:INODE pins the exact process (pidfd inode)", 1 },
	{ "all-threads", 'a', NULL, 0, "change every thread of each process, not only the main thread", 1 },
	{ "all-tasks", 0, NULL, OPTION_ALIAS, NULL, 1 },
	/* what "--all" means here: whole, not a prefix that getopt would
	 * find ambiguous with --allow-seccomp */
	{ "all", 0, NULL, OPTION_ALIAS, NULL, 1 },
	{ "cgroup", OPT_CGROUP, "PATH", 0,
	  "every thread of every process in the cgroup v2 directory PATH and below it (implies -a)", 1 },
	{ "unit", OPT_UNIT, "NAME", 0,
	  "every thread of every process of the systemd unit NAME (a bare name is a .service; implies -a)", 1 },

	{ NULL, 0, NULL, 0, "Policy (exactly one):", 2 },
	{ "interleave", 'i', "NODES", 0, "interleave new pages over NODES", 2 },
	{ "weighted-interleave", 'w', "NODES", 0,
	  "interleave over NODES by the node weights in /sys/kernel/mm/mempolicy (Linux 6.9)", 2 },
	{ "membind", 'm', "NODES", 0, "allocate only from NODES", 2 },
	{ "preferred", OPT_PREFERRED, "NODE", 0, "prefer NODE, fall back to others", 2 },
	{ "preferred-many", 'P', "NODES", 0, "prefer NODES, fall back to others", 2 },
	{ "localalloc", 'l', NULL, 0, "allocate on the node of the CPU that faults", 2 },
	{ "default", OPT_DEFAULT, NULL, 0, "remove the task policy: back to the system default", 2 },

	{ NULL, 0, NULL, 0, "Mode flags:", 3 },
	{ "static", OPT_STATIC, NULL, 0, "keep NODES as given when the target's cpuset changes (MPOL_F_STATIC_NODES)", 3 },
	{ "relative", OPT_RELATIVE, NULL, 0, "read NODES relative to the target's cpuset (MPOL_F_RELATIVE_NODES)", 3 },
	{ "balancing", 'b', NULL, 0, "with --membind: let NUMA balancing migrate within NODES (MPOL_F_NUMA_BALANCING)", 3 },

	{ NULL, 0, NULL, 0, "Pages already placed:", 4 },
	{ "migrate", 'M', NULL, 0, "after setting the policy, move the process's existing pages onto its nodes (migrate_pages(2))", 4 },
	{ "migrate-only", OPT_MIGRATE_ONLY, NULL, 0, "move the existing pages onto the policy's nodes and set no policy (works without pidfd_set_mempolicy)", 4 },
	{ "rate", OPT_RATE, "SIZE/s", 0,
	  "move an interleave's pages at most SIZE bytes a second (K, M, G: KiB, MiB, GiB), "
	  "so that the move leaves the workload memory bandwidth", 4 },
	{ "migrate-shared", OPT_MIGRATE_SHARED, NULL, 0,
	  "an interleave's re-spread moves shared and file pages too, which other processes map "
	  "(by default only private anonymous memory moves)", 4 },

	{ NULL, 0, NULL, 0, "How:", 5 },
	{ "backend", OPT_BACKEND, "auto|syscall|ptrace", 0,
	  "auto: pidfd_set_mempolicy(2) where the kernel provides it (no released Linux does), else ptrace; "
	  "syscall: pidfd_set_mempolicy(2) or exit 2, never ptrace; ptrace: have each thread call "
	  "set_mempolicy(2) itself, on any kernel (default: " PMP_DEFAULT_BACKEND_NAME ")", 5 },
	{ "allow-seccomp", OPT_ALLOW_SECCOMP, NULL, 0,
	  "with the ptrace backend, inject into threads under a seccomp filter too", 5 },
	{ "no-signal", OPT_NO_SIGNAL, NULL, 0,
	  "with the ptrace backend, stop each thread for its call: never the signal engine, which "
	  "sets a process's threads from a signal handler (a frame on each thread's stack)", 5 },

	{ NULL, 0, NULL, 0, "Output:", 6 },
	{ "show", 's', "VIEW", OPTION_ARG_OPTIONAL,
	  "change nothing; show each target thread's policy and allowed nodes (--show=threads, the default), "
	  "or each process's: its main thread's policy, how many threads share it, its pages per node "
	  "(--show=processes)", 6 },
	{ "output", 'o', "LIST", 0, "the --show columns to print, comma-separated (listed below)", 6 },
	{ "noheadings", OPT_NOHEADINGS, NULL, 0, "print the --show table without its heading line", 6 },
	{ "raw", OPT_RAW, NULL, 0, "print the --show table raw: one space between fields, "
	  "a blank within one escaped (\\x20)", 6 },
	{ "json", OPT_JSON, NULL, 0, "write the outcome (or --show) as one JSON document on stdout", 6 },
	{ NULL, 'J', NULL, OPTION_ALIAS, NULL, 6 },
	{ "dry-run", 'n', NULL, 0, "resolve and check everything, print what would be set, change nothing", 6 },
	{ "verbose", 'v', NULL, 0, "print one line per thread set", 6 },

	/* argp's own, but for -h, which every util-linux tool takes for help */
	{ "help", 'h', NULL, 0, "Give this help list", -1 },
	{ NULL, '?', NULL, OPTION_ALIAS, NULL, -1 },
	{ "usage", OPT_USAGE, NULL, 0, "Give a short usage message", -1 },
	{ "version", 'V', NULL, 0, "Print program version", -1 },
	{ NULL, 0, NULL, 0, NULL, 0 },
};

/* ---- PIDs as typed: "PID", "PID:INODE", comma lists ---------------------- */

/* The kernel's PID_MAX_LIMIT (4M); no PID can be larger. */
#define PID_LIMIT 4194304L

static int parse_decimal_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

static int parse_one_pid(const char *s, size_t len, struct pid_spec *spec, char *why, size_t whylen)
{
	const char *colon = memchr(s, ':', len);
	size_t pidlen = colon ? (size_t)(colon - s) : len;
	char shown[80];
	uint64_t v;

	memset(spec, 0, sizeof(*spec));
	if (parse_decimal_u64(s, pidlen, &v) < 0 || v == 0 || v > PID_LIMIT) {
		snprintf(why, whylen, "invalid PID '%s': expected a number from 1 to %ld",
			 text_printable(s, pidlen, shown, sizeof(shown)), PID_LIMIT);
		return -1;
	}
	spec->pid = (pid_t)v;
	if (colon) {
		size_t inolen = len - pidlen - 1;

		if (parse_decimal_u64(colon + 1, inolen, &v) < 0 || v == 0) {
			snprintf(why, whylen, "invalid PID:INODE '%s': the inode must be a positive number",
				 text_printable(s, len, shown, sizeof(shown)));
			return -1;
		}
		spec->pinned = true;
		spec->inode = v;
	}
	return 0;
}

int options_parse_pids(const char *arg, struct pid_spec **specs, size_t *n,
		       char *why, size_t whylen)
{
	size_t count = 1, added = 0;
	struct pid_spec *grown;
	const char *p = arg;

	for (const char *c = arg; *c; c++)
		if (*c == ',')
			count++;
	if (count > SIZE_MAX / sizeof(**specs) - *n) {
		snprintf(why, whylen, "too many PIDs");
		return -1;
	}
	grown = realloc(*specs, (*n + count) * sizeof(**specs));
	if (!grown) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	*specs = grown;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (len == 0) {
			char shown[80];

			snprintf(why, whylen, "empty PID in list '%s'",
				 text_printable(arg, (size_t)-1, shown, sizeof(shown)));
			return -1;
		}
		if (parse_one_pid(p, len, &grown[*n + added], why, whylen) < 0)
			return -1;
		added++;
		if (!comma)
			break;
		p = comma + 1;
	}
	*n += added;
	return 0;
}

/* The PIDs of one process sort together, first given first. */
struct pid_place {
	pid_t pid;
	size_t at;
};

static int by_pid_then_place(const void *a, const void *b)
{
	const struct pid_place *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

int options_merge_pids(struct pid_spec *specs, size_t *n, char *why, size_t whylen)
{
	struct pid_place *order;
	bool *dropped;
	size_t kept = 0;
	int ret = 0;

	if (*n < 2)
		return 0;
	order = malloc(*n * sizeof(*order));
	dropped = calloc(*n, sizeof(*dropped));
	if (!order || !dropped) {
		snprintf(why, whylen, "out of memory");
		ret = -1;
		goto out;
	}
	for (size_t i = 0; i < *n; i++)
		order[i] = (struct pid_place){ specs[i].pid, i };
	qsort(order, *n, sizeof(*order), by_pid_then_place);
	for (size_t i = 0, j; i < *n; i = j) {
		struct pid_spec *first = &specs[order[i].at];

		for (j = i + 1; j < *n && order[j].pid == order[i].pid; j++) {
			const struct pid_spec *again = &specs[order[j].at];

			dropped[order[j].at] = true;
			if (!again->pinned)
				continue;
			if (first->pinned && first->inode != again->inode) {
				snprintf(why, whylen, "pid %d is pinned to two processes (inodes %llu and %llu)",
					 (int)first->pid, (unsigned long long)first->inode,
					 (unsigned long long)again->inode);
				ret = -1;
				goto out;
			}
			first->pinned = true;	/* the pin holds wherever it was given */
			first->inode = again->inode;
		}
	}
	for (size_t i = 0; i < *n; i++)
		if (!dropped[i])
			specs[kept++] = specs[i];
	*n = kept;
out:
	free(order);
	free(dropped);
	return ret;
}

/* "100M/s", "512KiB/s", "1G": bytes per second, binary units.  0, or -1. */
int options_parse_rate(const char *arg, unsigned long long *rate)
{
	static const char units[] = "KMGT";
	unsigned long long v = 0;
	const char *p = arg, *u;
	int shift = 0;

	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (unsigned long long)(*p - '0')) / 10)
			return -1;
		v = v * 10 + (unsigned long long)(*p - '0');
	}
	if (*p && (u = strchr(units, *p)) != NULL) {
		shift = 10 * (int)(u - units + 1);
		p++;
		if (strncmp(p, "iB", 2) == 0)
			p += 2;
	} else if (*p == 'B') {
		p++;
	}
	if (strcmp(p, "/s") != 0 && *p)
		return -1;
	if (v == 0 || v > (UINT64_MAX >> shift))
		return -1;
	*rate = v << shift;
	return 0;
}

/* ---- the options ----------------------------------------------------- */

/* ---- the options, group by group as the table lists them --------------- */

/* Each group's parser takes its own keys and answers ARGP_ERR_UNKNOWN to
 * the others' (parse_option asks each in turn). */

static error_t target_option(int key, char *arg, struct argp_state *state)
{
	struct request *req = state->input;
	char why[256];

	switch (key) {
	case 'p':
		if (options_parse_pids(arg, &req->pids, &req->npids, why, sizeof(why)) < 0)
			argp_error(state, "%s", why);
		break;
	case 'a':
		req->all_threads = true;
		break;
	case OPT_UNIT:
		if (req->unit || req->cgroup)
			argp_error(state, "one --cgroup or --unit may be given");
		if (!arg[0])
			argp_error(state, "--unit needs a unit name");
		req->unit = arg;
		req->all_threads = true;
		break;
	case OPT_CGROUP:
		if (req->cgroup || req->unit)
			argp_error(state, "one --cgroup or --unit may be given");
		if (!arg[0])
			argp_error(state, "--cgroup needs a directory");
		req->cgroup = arg;
		req->all_threads = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static void set_mode(struct argp_state *state, int mode, const char *option, const char *nodes)
{
	struct request *req = state->input;

	if (req->mode >= 0)
		argp_error(state, "only one policy may be given (%s and %s)", req->mode_option, option);
	req->mode = mode;
	req->mode_option = option;
	req->nodes_arg = nodes;
}

/* The policy and its mode flags. */
static error_t policy_option(int key, char *arg, struct argp_state *state)
{
	struct request *req = state->input;

	switch (key) {
	case 'i':
		set_mode(state, MPOL_INTERLEAVE, "--interleave", arg);
		break;
	case 'w':
		set_mode(state, MPOL_WEIGHTED_INTERLEAVE, "--weighted-interleave", arg);
		break;
	case 'm':
		set_mode(state, MPOL_BIND, "--membind", arg);
		break;
	case OPT_PREFERRED:
		set_mode(state, MPOL_PREFERRED, "--preferred", arg);
		break;
	case 'P':
		set_mode(state, MPOL_PREFERRED_MANY, "--preferred-many", arg);
		break;
	case 'l':
		set_mode(state, MPOL_LOCAL, "--localalloc", NULL);
		break;
	case OPT_DEFAULT:
		set_mode(state, MPOL_DEFAULT, "--default", NULL);
		break;
	case OPT_STATIC:
		req->mode_flags |= MPOL_F_STATIC_NODES;
		break;
	case OPT_RELATIVE:
		req->mode_flags |= MPOL_F_RELATIVE_NODES;
		break;
	case 'b':
		req->mode_flags |= MPOL_F_NUMA_BALANCING;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* The pages already placed. */
static error_t migrate_option(int key, char *arg, struct argp_state *state)
{
	struct request *req = state->input;
	char why[256];

	switch (key) {
	case 'M':
		req->migrate = true;
		break;
	case OPT_MIGRATE_ONLY:
		req->migrate_only = true;
		break;
	case OPT_MIGRATE_SHARED:
		req->migrate_shared = true;
		break;
	case OPT_RATE:
		if (options_parse_rate(arg, &req->rate) < 0)
			argp_error(state, "invalid rate '%s' (e.g. 200M/s: bytes a second, K, M, G for KiB, "
				   "MiB, GiB)", text_printable(arg, (size_t)-1, why, sizeof(why)));
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* How the policy is put in. */
static error_t how_option(int key, char *arg, struct argp_state *state)
{
	struct request *req = state->input;
	char why[256];

	switch (key) {
	case OPT_BACKEND:
		if (strcmp(arg, "syscall") == 0)
			req->backend = CHOOSE_SYSCALL;
		else if (strcmp(arg, "ptrace") == 0)
			req->backend = CHOOSE_PTRACE;
		else if (strcmp(arg, "auto") == 0)
			req->backend = CHOOSE_AUTO;
		else
			argp_error(state, "unknown backend '%s' (auto, syscall or ptrace)",
				   text_printable(arg, (size_t)-1, why, sizeof(why)));
		req->backend_given = true;
		break;
	case OPT_ALLOW_SECCOMP:
		req->allow_seccomp = true;
		break;
	case OPT_NO_SIGNAL:
		req->no_signal = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static error_t output_option(int key, char *arg, struct argp_state *state)
{
	struct request *req = state->input;
	char why[256];

	switch (key) {
	case 's':
		req->show = true;
		if (!arg || strcmp(arg, "threads") == 0)
			req->show_view = SHOW_THREADS;
		else if (strcmp(arg, "processes") == 0)
			req->show_view = SHOW_PROCESSES;
		else
			argp_error(state, "unknown --show view '%s' (threads or processes)",
				   text_printable(arg, (size_t)-1, why, sizeof(why)));
		break;
	case 'o':
		req->show_columns = arg;
		break;
	case OPT_NOHEADINGS:
		req->noheadings = true;
		break;
	case OPT_RAW:
		req->raw = true;
		break;
	case 'J':
	case OPT_JSON:
		req->json = true;
		break;
	case 'n':
		req->dry_run = true;
		break;
	case 'v':
		req->verbose = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* A word on the command line is never a target; a PID there most likely
 * meant -p. */
static void reject_argument(char *arg, struct argp_state *state)
{
	struct pid_spec *as_pids = NULL;
	size_t npids = 0;
	char ignored[256], why[256];
	bool pids = options_parse_pids(arg, &as_pids, &npids, ignored, sizeof(ignored)) == 0;

	free(as_pids);
	text_printable(arg, (size_t)-1, why, sizeof(why));
	if (pids)	/* "--interleave=0 1234" */
		argp_error(state, "unexpected argument '%s' (did you mean -p %s?)", why, why);
	argp_error(state, "unexpected argument '%s'", why);
}

/* The options that only go with others. */
static void check_combinations(struct argp_state *state)
{
	const struct request *req = state->input;
	bool moving = req->migrate || req->migrate_only;

	if (req->show && req->mode >= 0)
		argp_error(state, "--show reads the policy; it takes no policy option (%s)", req->mode_option);
	if (req->show && (req->dry_run || req->mode_flags))
		argp_error(state, "--show takes no --dry-run, --static, --relative or --balancing");
	if ((req->show_columns || req->noheadings || req->raw) && (!req->show || req->json))
		argp_error(state, "--output, --noheadings and --raw shape the --show table "
			   "(not --json's document)");
	if (req->rate && !moving)
		argp_error(state, "--rate paces --migrate or --migrate-only");
	if (req->migrate_shared && !moving)
		argp_error(state, "--migrate-shared goes with --migrate or --migrate-only");
	if (req->migrate && req->migrate_only)
		argp_error(state, "--migrate and --migrate-only exclude each other");
	if (moving && (req->show || req->dry_run))
		argp_error(state, "--migrate and --migrate-only do not go with --show or --dry-run");
	if (moving && req->mode >= 0 && (req->mode == MPOL_LOCAL || req->mode == MPOL_DEFAULT))
		argp_error(state, "%s has no nodes to move pages to", req->mode_option);
	if (req->allow_seccomp && req->backend == CHOOSE_SYSCALL)
		argp_error(state, "--allow-seccomp goes with --backend=ptrace or auto");
	if (req->no_signal && req->backend == CHOOSE_SYSCALL)
		argp_error(state, "--no-signal goes with --backend=ptrace or auto");
}

/* The whole command line read: what a request cannot go without. */
static void check_request(struct argp_state *state)
{
	struct request *req = state->input;
	char why[256];

	if (options_merge_pids(req->pids, &req->npids, why, sizeof(why)) < 0)
		argp_error(state, "%s", why);
	check_combinations(state);
	if (req->mode < 0 && !req->show)
		argp_error(state, "no policy given (one of --interleave, --weighted-interleave, "
			   "--membind, --preferred, --preferred-many, --localalloc, --default; or --show)");
	if (req->npids == 0 && !req->cgroup && !req->unit)
		argp_error(state, "no target given (-p PID, --cgroup=PATH or --unit=NAME)");
	if (req->nodes_arg && req->nodes_arg[0] == '+')
		argp_error(state, "'+NODES' (relative to the caller's cpuset) does not apply to "
			   "another process; use --relative");
}

/* -h, --usage, -V; and what is no option: a word, the end. */
static error_t program_option(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'h':
	case '?':
		argp_state_help(state, state->out_stream, ARGP_HELP_STD_HELP);
		break;
	case OPT_USAGE:
		argp_state_help(state, state->out_stream, ARGP_HELP_USAGE | ARGP_HELP_EXIT_OK);
		break;
	case 'V':
		fprintf(state->out_stream, "%s\n", argp_program_version);
		exit(0);
	case ARGP_KEY_ARG:
		reject_argument(arg, state);
		break;
	case ARGP_KEY_END:
		check_request(state);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static error_t parse_option(int key, char *arg, struct argp_state *state)
{
	static error_t (*const groups[])(int, char *, struct argp_state *) = {
		target_option, policy_option, migrate_option, how_option, output_option, program_option,
	};

	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		error_t r = groups[i](key, arg, state);

		if (r != ARGP_ERR_UNKNOWN)
			return r;
	}
	return ARGP_ERR_UNKNOWN;
}

static const char doc[] =
	"Set the NUMA memory policy of a running process, or of each of its threads."
	"\vNODES is a node list in numactl's syntax: 1,3  0-3  all  !2  and libnuma's "
	"netdev:DEV, file:PATH, block:DEV, pci:BUS:DEV resolvers. Only allocations made after "
	"the change follow the new policy; see migratepages(8) for pages already placed.\n\n"
	"Exit status: 0 all set, 1 none set or usage error, 2 the kernel does not provide "
	"pidfd_set_mempolicy(2), 64 some set and some failed; 130, 143, 129 interrupted by SIGINT, "
	"SIGTERM, SIGHUP (at a thread boundary, after a line saying how far it got).";

/* The column list (show.h) follows the text after \v. */
static char *help_filter(int key, const char *text, void *input)
{
	char *with = NULL;

	(void)input;
	if (key != ARGP_KEY_HELP_POST_DOC || !text)
		return (char *)text;
	if (asprintf(&with, "%s\n\n%s", text, SHOW_COLUMNS_HELP) < 0)
		return (char *)text;	/* the help without the column list */
	return with;
}

static const struct argp argp = {
	option_table, parse_option, "POLICY -p PID[,PID...]\n--show[=processes] -p PID[,PID...]", doc, NULL,
	help_filter, NULL,
};

void options_parse(int argc, char **argv, struct request *req)
{
	memset(req, 0, sizeof(*req));
	req->mode = -1;
	req->backend = PMP_DEFAULT_BACKEND;
	argp_err_exit_status = 1;
	/* getopt names the program after argv[0]: make it the tool's name
	 * whatever path it was started by. */
	if (argc > 0)
		argv[0] = (char *)PACKAGE_NAME;
	/* argp's --help and --version are in the table, with -h */
	if (argp_parse(&argp, argc, argv, ARGP_NO_HELP, NULL, req) != 0)
		exit(1);
}

void options_release(struct request *req)
{
	free(req->pids);
	req->pids = NULL;
	req->npids = 0;
}
