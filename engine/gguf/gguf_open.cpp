// Opening a GGUF file: mapped or copied into memory, then parsed (gguf.cpp).
#include "gguf/gguf.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace sinkscope {

// Mapped or copied: what happens when the file changes on disk while a model uses it.
//
// A mapping (MAP_PRIVATE, read-only) costs no copy and shares the page cache, but by itself it
// does not freeze the file: if another process truncates it (`cp new.gguf model.gguf` and
// re-quantizing to the same path truncate in place before they write), touching a page past the
// new end raises SIGBUS and kills the process, inside the forward pass where no error can be
// returned; if another process rewrites it in place, the model would see the new bytes.
// Replacing the file by rename, or deleting it, is safe: the mapping keeps the old inode alive.
//
// Copy-on-write does not help: truncation zaps even a private mapping's copied pages (POSIX
// makes every page past the new end inaccessible, SIGBUS for the next touch). So once a model has
// made its own copies (dequantized tensors, matrices in another row layout, whose pages go back to
// the system), detachFromFile() moves the rest out of the file: it reads each range still in use
// into anonymous memory with pread() from the descriptor kept open until then (a file that shrank
// meanwhile is a short read and a message, not a signal), and mremap()s that memory over the
// range, so every pointer into the mapping stays valid and now points at the process's own pages.
// Nothing done to the file afterwards can fault them or change them. Measured on a 0.5B Q8_0
// shape (a 529 MB file, one run with one token, AVX2 and AVX-512 levels): peak RSS 557 MB with the
// detach as without it (it moves 8 MiB slices, so a slice and its copy are held together only
// briefly), open and first token in 0.56-0.61 s against 0.52-0.58 s. A copy of the whole file at
// open would not keep the page hand-back of the relaid matrices: it would hold the file twice
// where the AMX and AVX-512 levels relay it.
//
// A copy (read() into memory) at open is still taken where files change or vanish under a
// mapping before a model has detached from them: network filesystems (another machine writes the
// file, or the link drops) and FUSE (sshfs and the desktop SMB/NFS mounts), plus FAT/exFAT,
// which on Linux almost always means removable media that can be pulled out. Everything else
// (ext4, xfs, btrfs, tmpfs, overlay, ...) is mapped. Detection is by statfs f_type; a filesystem
// it does not know is treated as local.
namespace {

// statfs f_type magic numbers (linux/magic.h and the filesystems' own sources).
constexpr uint32_t kCopiedFilesystems[] = {
    0x6969,     // NFS
    0x517B,     // SMB (smbfs)
    0xFF534D42, // CIFS
    0xFE534D42, // SMB2 (cifs.ko with SMB2+)
    0x65735546, // FUSE (sshfs, gvfs, rclone, ...)
    0x00C36400, // Ceph
    0x5346414F, // AFS (OpenAFS)
    0x6B414653, // AFS (kAFS)
    0x01021997, // 9p (v9fs)
    0x564C,     // NCP
    0x0BD00BD0, // Lustre
    0x47504653, // GPFS
    0x4D44,     // FAT (msdos, vfat)
    0x2011BAB0, // exFAT
};

bool needsCopy(int fd) {
    struct statfs info {};
    if (::fstatfs(fd, &info) != 0) return false;
    const auto type = static_cast<uint32_t>(info.f_type);
    return std::find(std::begin(kCopiedFilesystems), std::end(kCopiedFilesystems), type) !=
           std::end(kCopiedFilesystems);
}

// The file's bytes, read from the start: up to `size`, fewer when it shrank meanwhile (parse()
// then reports the truncation). False with a message when read() fails or memory runs out.
bool readFileBytes(int fd, const std::string& path, uint64_t size, std::vector<uint8_t>& bytes,
                   std::string& error) {
    try {
        bytes.resize(size);
    } catch (const std::bad_alloc&) {
        error = "cannot read " + path + ": not enough memory to copy its " + std::to_string(size) +
                " bytes";
        return false;
    }
    uint64_t done = 0;
    while (done < size) {
        const ssize_t count =
            ::pread(fd, bytes.data() + done, size - done, static_cast<off_t>(done));
        if (count < 0 && errno == EINTR) continue;
        if (count < 0) {
            error = "cannot read " + path + ": " + std::strerror(errno);
            return false;
        }
        if (count == 0) break;
        done += static_cast<uint64_t>(count);
    }
    bytes.resize(done);
    return true;
}

} // namespace

std::unique_ptr<GgufFile> GgufFile::open(const std::string& path, std::string& error,
                                         GgufReadMode mode) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK); // a FIFO must not block
    if (fd < 0) {
        error = "cannot open " + path + ": " + std::strerror(errno);
        return nullptr;
    }
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
        error = "cannot read " + path + ": " + std::strerror(errno);
        ::close(fd);
        return nullptr;
    }
    if (!S_ISREG(info.st_mode)) {
        error = path + (S_ISDIR(info.st_mode) ? " is a directory" : " is not a regular file");
        ::close(fd);
        return nullptr;
    }
    std::unique_ptr<GgufFile> file(new GgufFile());
    file->m_path = path;
    file->m_size = static_cast<uint64_t>(info.st_size);
    const bool copy =
        mode == GgufReadMode::Copy || (mode == GgufReadMode::Automatic && needsCopy(fd));
    if (copy) {
        const bool read = readFileBytes(fd, path, file->m_size, file->m_ownedBytes, error);
        ::close(fd);
        if (!read) return nullptr;
        file->m_data = file->m_ownedBytes.data();
        file->m_size = file->m_ownedBytes.size();
        return parsed(std::move(file), error);
    }
    if (file->m_size > 0) { // mmap rejects length 0; parse() reports the empty file
        void* mapping = ::mmap(nullptr, file->m_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (mapping == MAP_FAILED) {
            error = "cannot map " + path + ": " + std::strerror(errno);
            ::close(fd);
            return nullptr;
        }
        file->m_mapping = mapping;
        file->m_data = static_cast<const uint8_t*>(mapping);
        file->m_fd = fd; // until detachFromFile() has read what the model keeps in place
        return parsed(std::move(file), error);
    }
    ::close(fd);
    return parsed(std::move(file), error);
}

std::unique_ptr<GgufFile> GgufFile::fromBytes(std::vector<uint8_t> bytes, std::string& error,
                                              const std::string& name) {
    std::unique_ptr<GgufFile> file(new GgufFile());
    file->m_path = name;
    file->m_ownedBytes = std::move(bytes);
    file->m_data = file->m_ownedBytes.data();
    file->m_size = file->m_ownedBytes.size();
    return parsed(std::move(file), error);
}

void GgufFile::releasePages(const uint8_t* begin, size_t bytes) const {
    if (!m_mapping) return;
    const auto pageSize = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto start = reinterpret_cast<uintptr_t>(begin);
    const uintptr_t first = (start + pageSize - 1) / pageSize * pageSize;
    const uintptr_t last = (start + bytes) / pageSize * pageSize;
    if (last <= first) return;
    ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
    m_releasedPages.emplace_back(first, last);
}

namespace {

// Replaces the mapping's pages [first, last) by anonymous memory holding the same bytes, read
// from `fd` at the range's file offset, a slice at a time so that the file's pages and their copy
// are never both held for more than one slice. False when the file no longer holds them all.
bool moveOutOfFile(int fd, uintptr_t mapping, uint64_t fileSize, uintptr_t first, uintptr_t last) {
    constexpr uintptr_t kSliceBytes = uintptr_t{8} << 20; // a multiple of every page size
    for (uintptr_t slice = first; slice < last; slice += kSliceBytes) {
        const size_t bytes = std::min(kSliceBytes, last - slice);
        void* own =
            ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (own == MAP_FAILED) return false;
        const uint64_t offset = slice - mapping;
        const uint64_t wanted =
            std::min<uint64_t>(bytes, fileSize - offset); // the last page's tail
        uint64_t done = 0;
        while (done < wanted) {
            const ssize_t count = ::pread(fd, static_cast<uint8_t*>(own) + done, wanted - done,
                                          static_cast<off_t>(offset + done));
            if (count < 0 && errno == EINTR) continue;
            if (count <= 0) break;
            done += static_cast<uint64_t>(count);
        }
        if (done < wanted || ::mprotect(own, bytes, PROT_READ) != 0 ||
            ::mremap(own, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED,
                     reinterpret_cast<void*>(slice)) == MAP_FAILED) {
            ::munmap(own, bytes);
            return false;
        }
    }
    return true;
}

} // namespace

bool GgufFile::detachFromFile(std::string& error) {
    if (m_fd < 0) return true;
    const auto pageSize = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<uintptr_t>(m_mapping);
    const uintptr_t end = begin + (m_size + pageSize - 1) / pageSize * pageSize;
    std::sort(m_releasedPages.begin(), m_releasedPages.end());
    uintptr_t from = begin;
    bool moved = true;
    for (const auto& [first, last] : m_releasedPages) {
        if (first > from) moved = moved && moveOutOfFile(m_fd, begin, m_size, from, first);
        from = std::max(from, last);
    }
    if (from < end) moved = moved && moveOutOfFile(m_fd, begin, m_size, from, end);
    ::close(m_fd);
    m_fd = -1;
    if (!moved) error = "the file changed on disk while it was being loaded";
    return moved;
}

GgufFile::~GgufFile() {
    if (m_fd >= 0) ::close(m_fd);
    if (m_mapping) ::munmap(m_mapping, m_size);
}

} // namespace sinkscope
