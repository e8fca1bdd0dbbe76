# cmake -DIN=<file> -DOUT=<header> -DVAR=<identifier> -P embed_file.cmake
# Writes <header> defining `inline constexpr const char VAR[]` = the file's bytes as a raw string.
file(READ "${IN}" content)
set(delim "orrery_embed")
string(FIND "${content}" ")${delim}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )${delim}\"")
endif()
set(text "// Generated from ${IN} by src/config/embed_file.cmake; do not edit.\n#pragma once\n\nnamespace orrery {\ninline constexpr const char ${VAR}[] = R\"${delim}(${content})${delim}\";\n}  // namespace orrery\n")
# Rewrite only when changed, so dependents are not rebuilt needlessly.
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
  if(old STREQUAL text)
    return()
  endif()
endif()
file(WRITE "${OUT}" "${text}")
