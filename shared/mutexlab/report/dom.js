"use strict";
/* The DOM helper both pages use: inlined into the report before report.js, served to the
   explorer as /dom.js before explore.js. */

// A new <tag> holding text (none when null or undefined), with class cls, appended to parent.
function h(tag, text, parent, cls) {
  var e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = text;
  if (cls) e.className = cls;
  if (parent) parent.appendChild(e);
  return e;
}
