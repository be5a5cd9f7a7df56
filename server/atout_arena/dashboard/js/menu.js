// The header's menu on a narrow screen: the ☰ button opens and closes the links and the token
// field (style.css hides them below 700 px); choosing a link closes it.

const bar = document.querySelector(".topbar");
const toggle = document.querySelector(".menu-toggle");
if (bar && toggle) {
  toggle.onclick = () => {
    const open = bar.classList.toggle("open");
    toggle.setAttribute("aria-expanded", String(open));
  };
  bar.querySelector("nav").addEventListener("click", (e) => {
    if (e.target.closest("a")) {
      bar.classList.remove("open");
      toggle.setAttribute("aria-expanded", "false");
    }
  });
}
