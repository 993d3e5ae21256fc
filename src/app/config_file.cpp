#include "app/config_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"

namespace fedsilo {

namespace {

bool isTextByte(unsigned char byte) {
  return (byte >= 0x20 && byte != 0x7f) || byte == '\t' || byte == '\n' || byte == '\r' || byte == '\f';
}

// Closes the descriptor on every path out of readConfigText.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

// ConfigError at the first byte of `chunk` (which starts at byte `offset` of the file) that no text
// file holds; `line` counts the lines before the chunk and is advanced past it.
void requireText(const std::string& path, const char* chunk, std::size_t size, std::size_t offset, std::size_t& line) {
  for (std::size_t i = 0; i < size; ++i) {
    const auto byte = static_cast<unsigned char>(chunk[i]);
    if (byte == '\n') ++line;
    if (isTextByte(byte)) continue;
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", byte);
    throw ConfigError(fmt("config = ", path, ": byte ", hex, " at offset ", offset + i, " (line ", line,
                          "): not a text INI file"));
  }
}

}  // namespace

std::string readConfigText(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ConfigError(fmt("config = ", path, ": is a directory, expected an INI file"));
  Descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0)
    throw ConfigError(fmt("config = ", path, ": cannot open the configuration file (", std::strerror(errno), ")"));
  std::string text;
  std::size_t line = 1;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t got = ::read(file.fd, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      throw ConfigError(fmt("config = ", path, ": read error after ", text.size(), " bytes (", std::strerror(errno),
                            ")"));
    if (got == 0) break;
    requireText(path, chunk, static_cast<std::size_t>(got), text.size(), line);
    if (text.size() + static_cast<std::size_t>(got) > kMaxConfigBytes)
      throw ConfigError(fmt("config = ", path, ": larger than ", kMaxConfigBytes >> 20, " MiB, expected an INI file"));
    text.append(chunk, static_cast<std::size_t>(got));
  }
  // A zero-byte file is what a failed or interrupted write leaves: refuse it rather than run every
  // default (a file of comments only is a deliberate choice and is accepted).
  if (text.empty()) throw ConfigError(fmt("config = ", path, ": the file is empty (0 bytes), expected an INI file"));
  static const std::string bom = "\xEF\xBB\xBF";
  if (text.compare(0, bom.size(), bom) == 0) text.erase(0, bom.size());
  return text;
}

std::string printableExcerpt(const std::string& text, std::size_t maxChars) {
  std::string out;
  for (char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    std::string piece(1, ch);
    if (byte < 0x20 || byte > 0x7e) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", byte);
      piece = hex;
    }
    if (out.size() + piece.size() > maxChars) return out + "...";
    out += piece;
  }
  return out;
}

}  // namespace fedsilo
