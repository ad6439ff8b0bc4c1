// The frames a helper's explicit stack keeps on the device heap (recursive_helper.cpp): when a call
// fills the private frames their older half goes to the next chunk of the heap, and a return that
// finds them empty takes the newest chunk's frames back. What the loop of activations prints for
// the chunk's type, the spill, the fill and the call's end.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace chanflow::compiler {

struct SpilledFrames {
  /// A field a frame saves (a parameter, a local, a call's result, the activation's block).
  struct Field {
    std::string name;
    /// Its declaration as `as` (a name with its array bounds).
    std::function<std::string(const std::string& as)> declared;
    /// `to = from` for its type; `from_global`, `to_global`: which side is on the heap.
    std::function<std::string(const std::string& to, const std::string& from, bool from_global, bool to_global)> copy;
  };
  std::string chunk;        ///< the chunk's struct name
  std::string helper;       ///< the helper's name (a comment)
  unsigned helper_id = 0;   ///< names it in the run-time error
  std::string resume_type;  ///< of the frames' resume points
  std::vector<Field> fields;

  /// The chunk's type: `half` frames, linked both ways.
  std::string type(unsigned half) const;
  /// After a call pushed the last of `frames` private frames; `value`: what the helper returns
  /// (" cf_value", or "") when the heap has no room.
  std::string spill(unsigned frames, const std::string& value) const;
  /// A return found the private frames empty (`half` of them come back, if any were spilled).
  std::string fill(unsigned half) const;
  /// The call's end: its chunks back to the heap.
  std::string release() const;
};

}  // namespace chanflow::compiler
