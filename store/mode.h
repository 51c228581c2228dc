/* mode.h - the timing modes, as one descriptor table: the only place a
 * mode is defined. Everything that lists, validates or switches on modes
 * reads this table: the record check (store/record.c), the space file
 * (grid/space.c), the ranking, seeds and report (seeds/), the measurement
 * (sweep/measure.c dispatches on l2 and launch below), the stopping rule
 * (sweep/stats.h looks `stop` up by name), the help texts (mode_help_text
 * in `fasweep --help`, {{MODES}} in cli/cli.c) and docs/measurement.md
 * ("The three modes"). Scripts read the names from fasweep (`version
 * --json`, `plan --json`), never a copy.
 *
 * Per mode: its name (a record key field, at most MODE_NAME_MAX - 1
 * bytes), one line on what it measures (the L2 state and the launch
 * pattern), the two enums the worker times by, the NAME of the stopping
 * criterion (a named object of sweep/stats.h, nvbench style), how its
 * uncertainty (the record's time.noise) is estimated, as an enum and a
 * line of text, and the record fields it fills.
 *
 * The table's order is the modes' order everywhere (groups, help, docs):
 * the first mode is the default. Lowest layer (store/, no dependencies),
 * because records, ranking and the report read it and the engine cannot
 * be included by them.
 */
#ifndef MODE_H
#define MODE_H

/* Room for a mode name with its NUL (record.mode, space modes, task modes). */
#define MODE_NAME_MAX 8

typedef enum mode_id { MODE_HOT, MODE_COLD, MODE_BATCH, MODE_COUNT } mode_id;

/* The L2 state of every timed sample. */
typedef enum mode_l2 {
    MODE_L2_WARM,   /* inputs reused launch after launch: they sit in L2 */
    MODE_L2_FLUSHED /* a buffer of twice the L2 size written before each sample, outside its
                       events: inputs come from DRAM */
} mode_l2;

/* What one event pair (one sample) times. */
typedef enum mode_launch {
    MODE_LAUNCH_SINGLE, /* one launch: time per launch includes its ~2 us launch and ramp */
    MODE_LAUNCH_BATCH   /* back-to-back launches (measure.batch_us of them): time per launch
                           = their time / launches (throughput) */
} mode_launch;

/* How a record's uncertainty (time.noise, a relative standard error of
 * its median) is estimated. The next method (rounds interleaved across the
 * grid, bootstrap over rounds) is a new value here and a new case in
 * stats_timing_for (sweep/stats.h). */
typedef enum mode_uncertainty {
    MODE_UNC_MEDIAN_SE /* sqrt(pi/2) * stdev / (sqrt(n) * median) over one run's samples */
} mode_uncertainty;

typedef struct mode_desc {
    mode_id id;
    const char *name;     /* "hot": the record's key.mode, the space's and the CLI's word */
    const char *measures; /* one line: L2 state and launch pattern */
    mode_l2 l2;
    mode_launch launch;
    const char *stop; /* the stopping criterion's name (sweep/stats.h stats_criterion_find) */
    mode_uncertainty uncertainty;
    const char *uncertainty_text; /* one line: how time.noise is estimated */
    const char *fills;            /* the record fields it fills */
} mode_desc;

/* The table, MODE_COUNT entries in mode_id order. */
const mode_desc *mode_at(int i);
/* The mode of that name, or NULL when there is none (unknown modes are
 * refused by every caller). */
const mode_desc *mode_find(const char *name);
/* Its place in the table (mode_id), -1 when unknown or NULL. */
int mode_index(const char *name);
/* The default mode (the table's first: hot). */
const mode_desc *mode_default(void);

/* The method's short name: "median_se"; "unknown" outside the enum. */
const char *mode_uncertainty_name(mode_uncertainty u);

/* "hot, cold, batch": the names, for messages. */
const char *mode_names_text(void);
/* "\"hot\", \"cold\" or \"batch\"": the names quoted, for the space
 * file's messages. */
const char *mode_names_quoted(void);

/* The help text of the modes, one block per mode (name, what it
 * measures, the names of its stop rule and uncertainty method), each line
 * indented and ending in a newline: for `--help` texts. Built from the
 * table once; the pointer stays valid. */
const char *mode_help_text(void);

#endif /* MODE_H */
