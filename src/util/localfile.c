/*
 * file.c — local files as floe_input / floe_output.
 */
#include "util/localfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/alloc.h"

typedef struct file_input {
	floe_input base;
	int fd;
	char *name;
} file_input;

static int fi_read_at(floe_input *in, uint64_t off, void *buf, size_t n, size_t *got,
		      floe_error *err)
{
	file_input *f = (file_input *)in;
	for (;;) {
		ssize_t r = pread(f->fd, buf, n, (off_t)off);
		if (r >= 0) {
			*got = (size_t)r;
			return FLOE_OK;
		}
		if (errno != EINTR)
			return floe_error_set(err, FLOE_EIO, "read '%s': %s", f->name, strerror(errno));
	}
}

static void fi_close(floe_input *in)
{
	file_input *f = (file_input *)in;
	close(f->fd);
	floe_free(f->name);
	floe_free(f);
}

static const floe_input_ops file_input_ops = {fi_read_at, fi_close, NULL};

int floe_input_file_open(floe_input **out, const char *path, floe_error *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return floe_error_set(err, errno == ENOENT ? FLOE_ENOTFOUND : FLOE_EIO,
				      "cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return floe_error_set(err, FLOE_EINVAL, "'%s' is not a regular file", path);
	}
	file_input *f = floe_calloc(1, sizeof(*f));
	if (!f || !(f->name = floe_strdup(path))) {
		floe_free(f);
		close(fd);
		return floe_error_oom(err);
	}
	f->fd = fd;
	f->base.ops = &file_input_ops;
	f->base.size = (uint64_t)st.st_size;
	f->base.name = f->name;
	*out = &f->base;
	return FLOE_OK;
}

typedef struct file_output {
	floe_output base;
	int fd;
	char *name;
} file_output;

static int fo_write(floe_output *out, const void *p, size_t n, floe_error *err)
{
	file_output *f = (file_output *)out;
	const uint8_t *b = p;
	while (n > 0) {
		ssize_t w = write(f->fd, b, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return floe_error_set(err, FLOE_EIO, "write '%s': %s", f->name, strerror(errno));
		}
		b += w;
		n -= (size_t)w;
	}
	return FLOE_OK;
}

static void fo_free(file_output *f)
{
	if (f->fd >= 0)
		close(f->fd);
	floe_free(f->name);
	floe_free(f);
}

static int fo_close(floe_output *out, floe_error *err)
{
	file_output *f = (file_output *)out;
	int rc = FLOE_OK;
	if (close(f->fd) != 0)
		rc = floe_error_set(err, FLOE_EIO, "close '%s': %s", f->name, strerror(errno));
	f->fd = -1;
	fo_free(f);
	return rc;
}

static void fo_abort(floe_output *out)
{
	file_output *f = (file_output *)out;
	unlink(f->name);
	fo_free(f);
}

static const floe_output_ops file_output_ops = {fo_write, fo_close, fo_abort};

int floe_output_file_create(floe_output **out, const char *path, floe_error *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return floe_error_set(err, FLOE_EIO, "cannot create '%s': %s", path, strerror(errno));
	file_output *f = floe_calloc(1, sizeof(*f));
	if (!f || !(f->name = floe_strdup(path))) {
		floe_free(f);
		close(fd);
		unlink(path);
		return floe_error_oom(err);
	}
	f->fd = fd;
	f->base.ops = &file_output_ops;
	f->base.name = f->name;
	*out = &f->base;
	return FLOE_OK;
}
