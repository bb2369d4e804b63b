#pragma once
// Every command that writes a file a user keeps (recordings, image files, models) refuses to
// replace an existing one unless given --force, and a path in a missing folder, before any work,
// with the same words.
#include <string>

namespace eit::cli {

// Throws CommandError "LABEL: the folder F does not exist" when the file's folder is missing, and
// "LABEL: the file exists; give --force to replace it (or ADVICE)" when
// `path` exists and `force` is false. `label` names the file as the user gave it ("--record
// x.h5", "x.h5"); `advice`: how else to avoid it ("choose another name", "-o another name").
void refuse_existing_output(const std::string& path, bool force, const std::string& label,
                            const std::string& advice = "choose another name");

// Throws CommandError "LABEL: that is INPUT_LABEL, which this command reads; choose another name"
// when `output` names the same file as `input` (one path, or two names of one file). --force
// does not lift it: the input would be destroyed before it is read.
void refuse_output_is_input(const std::string& output, const std::string& input,
                            const std::string& label, const std::string& input_label);

}  // namespace eit::cli
