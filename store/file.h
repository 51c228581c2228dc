/* file.h - the one way fasweep writes an output file and makes a
 * directory (lowest layer: store/, seeds/, sweep/ and cli/ all use it).
 *
 * file_write(PATH, fn, ctx) writes what fn writes to its FILE into PATH,
 * by what PATH is (never replacing a node that is not a regular file):
 *
 *   a write-protected file      an error (no owner write bit, or not
 *                               writable by this user): rename() would
 *                               replace it where `>` refuses;
 *   a new path, a regular file  written into a temp file beside it
 *                               (PATH.tmp.XXXXXX), synced, and renamed
 *                               over PATH only when all of it was
 *                               written: a reader sees the old file or
 *                               the whole new one, never half of one;
 *   a symbolic link             resolved (also when dangling); its target
 *                               written as above: the link stays a link;
 *   anything else (a character  opened and written straight through (a
 *   device, a FIFO, /dev/stdout, FIFO's reader gets the data), with write
 *   /dev/fd/N, /proc/...)       errors reported: -o /dev/full fails with
 *                               "No space left on device";
 *   a directory                 an error.
 *
 * One of this process's own descriptors by name (/dev/stdout, /dev/stderr,
 * /dev/fd/N, /proc/self/fd/N) is written through a copy of it, not opened
 * anew: `-o /dev/stdout >> log` appends as the shell set it up.
 *
 * No temp file outlives the call: on any failure it is removed, and while
 * one exists SIGINT, SIGTERM, SIGHUP and SIGQUIT remove it before the
 * process dies of the signal (the earlier handlers are back when the call
 * returns). A replaced file keeps its permission bits; a new one gets
 * 0666 less the umask.
 *
 * One write at a time: file_write is not reentrant (the handler knows one
 * temp file), so a writer must not call it.
 *
 * Test hook: FASWEEP_TEST_WRITE_SLEEP=SECONDS sleeps after fn has written
 * (the temp file exists, nothing is renamed yet), so a test can signal the
 * process mid-write.
 */
#ifndef FILE_H
#define FILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* Writes into out; returns 0, or a positive status after its own message
 * (file_write then removes the temp file and returns that status). */
typedef int (*file_writer)(FILE *out, void *ctx);

/* Writes path through fn (above). Returns 0 when all of it is in place; the
 * writer's positive status when it failed; -1 on an I/O failure, with one
 * line in err saying what failed on which path. */
int file_write(const char *path, file_writer fn, void *ctx, char *err, size_t errlen);

/* file_write of one text (a '\n' is appended when it does not end in one). */
int file_write_text(const char *path, const char *text, char *err, size_t errlen);

/* mkdir -p: creates dir and every missing parent with mode (less the
 * umask). Returns 0 when dir is a directory afterwards, else the errno
 * value (ENOTDIR when dir or a parent exists and is not a directory), with
 * the path that failed in failed[0..n). */
int file_mkdirs(const char *dir, mode_t mode, char *failed, size_t n);

/* Reads the whole regular file at path into *text (NUL-terminated, *len
 * bytes; the caller frees). For paths that come from data (a record's
 * kernel_path, a seeds file's name) rather than from the user: nothing
 * but a regular file is ever read, and nothing is waited on (a FIFO or
 * /dev/stdin is opened with O_NONBLOCK and refused). Returns 0 when read;
 * 1 when there is nothing to read: no such path (a dangling link too) or
 * not a regular file; -1 when it cannot be read (errno: permission, I/O,
 * ENOMEM, or EFBIG when it holds more than max bytes). */
int file_read_regular(const char *path, size_t max, char **text, size_t *len);

#endif /* FILE_H */
