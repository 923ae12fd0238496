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
// A mapping (MAP_PRIVATE, read-only) costs no copy and shares the page cache, but it does not
// freeze the file: if another process truncates it, touching a page past the new end raises
// SIGBUS and kills the process (no error can be returned: the fault happens inside the forward
// pass, on any F32 weight used in place); if another process rewrites it in place, the model may
// see the new bytes. Replacing the file by rename (how editors and downloaders save) is safe: the
// mapping keeps the old inode alive. Tensors stored as F16/Q8_0/Q4_0 are dequantized at load, and
// the metadata and tokenizer are copied, so after load only F32 weights still read the mapping.
//
// A copy (read() into memory) cannot be reached by later changes at all; the file may even be
// deleted or truncated at once. It costs the file's size in memory, once.
//
// Automatic copies where files change or vanish under a mapping without warning: network
// filesystems (another machine writes the file, or the link drops) and FUSE (sshfs and the desktop
// SMB/NFS mounts), plus FAT/exFAT, which on Linux almost always means removable media that can
// be pulled out. Everything else (ext4, xfs, btrfs, tmpfs, overlay, ...) is mapped. Detection is by
// statfs f_type; a filesystem it does not know is treated as local.
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
    }
    ::close(fd); // the mapping keeps the file alive
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
    if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

GgufFile::~GgufFile() {
    if (m_mapping) ::munmap(m_mapping, m_size);
}

} // namespace sinkscope
