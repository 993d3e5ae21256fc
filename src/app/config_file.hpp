// Reading the INI configuration file as text, before Boost.Program_options parses it: only a readable,
// non-empty text file gets that far, so that neither a device (/dev/zero), a binary file nor a read
// error can hang the parser, exhaust memory, or be echoed raw into an error message.
#pragma once
#include <cstddef>
#include <string>

namespace fedsilo {

// A configuration file larger than this is not an INI file a person or a script wrote.
constexpr std::size_t kMaxConfigBytes = 16u << 20;

// The text of the configuration file `path`, a UTF-8 byte-order mark at its start removed. Throws
// ConfigError naming the file when it is a directory, cannot be opened, cannot be read (a read error
// is never taken for the end of the file), is empty, is larger than kMaxConfigBytes, or holds a byte
// no text file holds (NUL or another control character but tab, CR, LF and form feed): then the
// message names the byte, its offset and its line.
std::string readConfigText(const std::string& path);

// `text` with every byte outside printable ASCII written as \xNN, cut to `maxChars` characters
// ("..." marks the cut): what an error message may quote of a line from a file.
std::string printableExcerpt(const std::string& text, std::size_t maxChars);

}  // namespace fedsilo
