/* owned.c - folders and files only this user may write (contract:
 * owned.h). */
#include "owned.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "text.h"

/* Why st may not be trusted (type aside), or NULL. */
static const char *owned_stat_bad(const struct stat *st)
{
    if (st->st_uid != geteuid())
        return "owned by another user";
    if (st->st_mode & (S_IWGRP | S_IWOTH))
        return "writable by others";
    return NULL;
}

const char *owned_dir_bad(const char *dir, int follow)
{
    struct stat st;
    if ((follow ? stat(dir, &st) : lstat(dir, &st)) != 0)
        return strerror(errno);
    if (S_ISLNK(st.st_mode))
        return "a symbolic link";
    if (!S_ISDIR(st.st_mode))
        return "not a directory";
    return owned_stat_bad(&st);
}

const char *owned_fd_bad(int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return strerror(errno);
    if (!S_ISREG(st.st_mode))
        return "not a regular file";
    return owned_stat_bad(&st);
}

int owned_fnv_fd(int fd, uint64_t *h)
{
    char buf[65536];
    off_t at = 0;
    ssize_t got;
    *h = TEXT_FNV_INIT;
    while ((got = pread(fd, buf, sizeof buf, at)) > 0) {
        *h = text_fnv1a(*h, buf, (size_t)got);
        at += got;
    }
    return got < 0 ? -1 : 0;
}

void owned_rmdir(const char *dir)
{
    const int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            (void)unlinkat(fd, de->d_name, 0);
    closedir(d);
    (void)rmdir(dir);
}
