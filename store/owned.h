/* owned.h - the checks before fasweep trusts a folder or a file enough to
 * load code from it (sweep/variant.c's compile cache): it must be this
 * user's (owner == euid) and nobody else may write it, so no other local
 * user can put or change a file there; a link is refused where the caller
 * asks (a link in a shared folder such as /tmp can point anywhere). Also
 * the FNV-1a of an open file (what a cache records at build time and
 * checks before loading) and the removal of a folder of plain files (a
 * temp build folder).
 *
 * A leaf module like text.h: POSIX only, nothing of the project but
 * text.h's hash.
 */
#ifndef OWNED_H
#define OWNED_H

#include <stdint.h>

/* Why the folder dir may not be trusted, or NULL: it must be a directory
 * (a symbolic link is refused unless follow), owned by the effective user,
 * not writable by group or others. The reason is a static string or
 * strerror's ("owned by another user", "writable by others", "a symbolic
 * link", "not a directory", "No such file or directory"). */
const char *owned_dir_bad(const char *dir, int follow);

/* The same for the open file fd: a regular file of the effective user that
 * group and others may not write; NULL when it is. */
const char *owned_fd_bad(int fd);

/* FNV-1a 64 (text_fnv1a) of everything fd holds, read with pread from
 * offset 0. Returns 0, or -1 with errno set. */
int owned_fnv_fd(int fd, uint64_t *h);

/* Removes the folder dir and the plain files in it (a temp build folder);
 * a link named dir is not followed. Best effort: errors are ignored. */
void owned_rmdir(const char *dir);

#endif /* OWNED_H */
