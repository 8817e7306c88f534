# Wraps the HTML report's CSS and JavaScript into C++ raw string literals (cmake -P; INPUTS is a
# ';'-separated list, OUT the header). A file's name gives its variable: report.js -> kReportJs.
file(WRITE ${OUT}.tmp "// Generated from analyzer/render/html by embed.cmake. Do not edit.\n#pragma once\n")
foreach(input ${INPUTS})
  get_filename_component(name ${input} NAME)
  string(REPLACE "." "_" name ${name})
  file(READ ${input} content)
  string(FIND "${content}" ")GPULEAK_ASSET\"" bad)
  if(NOT bad EQUAL -1)
    message(FATAL_ERROR "${input} contains the raw string delimiter")
  endif()
  file(APPEND ${OUT}.tmp "static constexpr const char k_${name}[] = R\"GPULEAK_ASSET(${content})GPULEAK_ASSET\";\n")
endforeach()
file(RENAME ${OUT}.tmp ${OUT})
