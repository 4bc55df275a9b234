#include "trnsim/report/writers/output_file.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include "trnsim/error.hpp"

namespace trnsim::report {
namespace {

namespace fs = std::filesystem;

// The temporaries being written, for the signal handler: fixed slots, so that the handler reads
// them without allocating or locking (only async-signal-safe calls: unlink, signal, raise).
constexpr int kSlots = 16;
constexpr std::size_t kPathMax = 4096;
enum SlotState : int { kFree, kClaimed, kReady };
struct Slot {
  std::atomic<int> state{kFree};
  char path[kPathMax] = {};
};
Slot g_slots[kSlots];

extern "C" void remove_temporaries_and_reraise(int sig) {
  for (Slot& s : g_slots)
    if (s.state.load() == kReady) ::unlink(s.path);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// A temporary file of the same directory as `path`, removed on destruction unless committed.
class Temporary {
 public:
  explicit Temporary(const std::string& path) : target_(path) {
    const fs::path p(path);
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    // Appended piecewise: `"." + string` trips GCC 12's false -Wrestrict at -O3.
    std::string base = ".";
    base += p.filename().string();
    base += ".tmp-XXXXXX";
    std::string name = (dir / base).string();
    const int fd = ::mkstemp(name.data());
    if (fd < 0) throw InputError(fmt::format("{}: cannot create the file ({})", path, std::strerror(errno)));
    // mkstemp creates 0600; an output file gets the mode a plain open would give it.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    (void)::fchmod(fd, static_cast<mode_t>(0666 & ~mask));
    ::close(fd);
    name_ = std::move(name);
    for (int i = 0; i < kSlots; ++i) {
      int expected = kFree;
      if (name_.size() < kPathMax && g_slots[i].state.compare_exchange_strong(expected, kClaimed)) {
        std::memcpy(g_slots[i].path, name_.c_str(), name_.size() + 1);
        g_slots[i].state.store(kReady);
        slot_ = i;
        break;
      }
    }
  }
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;
  ~Temporary() {
    if (!committed_) ::unlink(name_.c_str());
    release();
  }

  const std::string& name() const { return name_; }

  void commit() {
    if (::rename(name_.c_str(), target_.c_str()) != 0) {
      const int err = errno;
      throw InputError(err == EISDIR ? fmt::format("{}: cannot write the file: it is a directory", target_)
                                     : fmt::format("{}: cannot write the file ({})", target_, std::strerror(err)));
    }
    committed_ = true;
    release();
  }

 private:
  void release() {
    if (slot_ >= 0) g_slots[slot_].state.store(kFree);
    slot_ = -1;
  }
  std::string target_, name_;
  int slot_ = -1;
  bool committed_ = false;
};

// Where to write: a symbolic link's target (the link stays a link), else the path itself.
std::string resolve_target(const std::string& path) {
  std::error_code ec;
  if (fs::is_symlink(path, ec)) {
    const fs::path target = fs::weakly_canonical(path, ec);
    if (!ec) return target.string();
  }
  return path;
}

// Where an output to `path` goes: its target, replaced through a temporary beside it, or written
// in place where it is a device or a pipe (no rename possible). InputError for a directory there.
struct Destination {
  std::string target;
  bool in_place = false;
};
Destination destination_of(const std::string& path) {
  Destination d{resolve_target(path)};
  std::error_code ec;
  const fs::file_status status = fs::status(d.target, ec);
  if (fs::is_directory(status)) throw InputError(fmt::format("{}: cannot write the file: it is a directory", path));
  d.in_place = fs::exists(status) && !fs::is_regular_file(status);
  return d;
}

void write_stream(const std::string& file, const std::string& shown, std::ios::openmode mode,
                  const std::function<void(std::ostream&)>& write) {
  std::ofstream out(file, std::ios::binary | mode);
  if (!out) throw InputError(fmt::format("{}: cannot open for writing", shown));
  write(out);
  out.close();
  if (!out) throw InputError(fmt::format("{}: write failed", shown));
}

}  // namespace

void check_output_file(const std::string& path) {
  const Destination d = destination_of(path);
  if (!d.in_place) {
    const Temporary probe(d.target);  // not committed: removed at the end of this block
  }
}

void write_output_file(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const Destination d = destination_of(path);
  if (d.in_place) {
    write_stream(d.target, path, std::ios::out, write);
    return;
  }
  Temporary temporary(d.target);
  write_stream(temporary.name(), path, std::ios::trunc, write);
  temporary.commit();
}

void write_output_file(const std::string& path, const std::string& text) {
  write_output_file(path, [&text](std::ostream& out) { out << text; });
}

namespace {

// An existing file's first line (without a trailing CR) must be `header` to be appended to.
void check_first_line(const std::string& path, std::string first, const std::string& header) {
  if (!first.empty() && first.back() == '\r') first.pop_back();
  if (first != header)
    throw InputError(fmt::format("{}: cannot append: its first line is not the expected header "
                                 "(expected \"{}\", found \"{}\")",
                                 path, header, first));
}

}  // namespace

void check_append_output_file(const std::string& path, const std::string& header) {
  check_output_file(path);
  std::ifstream in(path, std::ios::binary);
  std::string first;
  if (in && std::getline(in, first) && !header.empty()) check_first_line(path, first, header);
}

void append_output_file(const std::string& path, const std::string& header, const std::string& text) {
  std::string content;
  {
    std::error_code ec;
    if (fs::is_directory(path, ec)) throw InputError(fmt::format("{}: cannot write the file: it is a directory", path));
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream all;
      all << in.rdbuf();
      content = std::move(all).str();
    } else if (fs::exists(path, ec)) {
      throw InputError(fmt::format("{}: cannot read the file to append to it ({})", path, std::strerror(errno)));
    }
  }
  if (!header.empty()) {
    if (content.empty()) {
      content = header + '\n';
    } else {
      check_first_line(path, content.substr(0, content.find('\n')), header);
    }
  }
  content += text;
  write_output_file(path, content);
}

void remove_partial_outputs_on_signal() {
  std::signal(SIGINT, remove_temporaries_and_reraise);
  std::signal(SIGTERM, remove_temporaries_and_reraise);
}

}  // namespace trnsim::report
