# fedsilo.1 in the build directory, generated from the built binary's --help by tools/gen_man_page.sh
# (part of the default build; installed to share/man/man1). The binary must run on the build machine:
# FEDSILO_MAN=OFF where it cannot (a cross build), and then no page is made or installed.
set(FEDSILO_MAN_PAGE "")
if(FEDSILO_MAN AND NOT CMAKE_CROSSCOMPILING)
  set(FEDSILO_MAN_PAGE ${PROJECT_BINARY_DIR}/fedsilo.1)
  add_custom_command(OUTPUT ${FEDSILO_MAN_PAGE}
                     COMMAND bash ${PROJECT_SOURCE_DIR}/tools/gen_man_page.sh $<TARGET_FILE:fedsilo> ${FEDSILO_MAN_PAGE}
                     DEPENDS fedsilo ${PROJECT_SOURCE_DIR}/tools/gen_man_page.sh
                     COMMENT "Generating fedsilo.1 from fedsilo --help" VERBATIM)
  add_custom_target(fedsilo_man ALL DEPENDS ${FEDSILO_MAN_PAGE})
endif()
