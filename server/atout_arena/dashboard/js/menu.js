// The header's menu on a narrow screen: the ☰ button opens and closes the links and the token
// field (style.css hides them below 700 px); choosing a link closes it, and so does Escape,
// which gives the focus back to the ☰.

const bar = document.querySelector(".topbar");
const toggle = document.querySelector(".menu-toggle");
if (bar && toggle) {
  const show = (open) => {
    bar.classList.toggle("open", open);
    toggle.setAttribute("aria-expanded", String(open));
  };
  toggle.onclick = () => show(!bar.classList.contains("open"));
  bar.querySelector("nav").addEventListener("click", (e) => {
    if (e.target.closest("a")) show(false);
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && bar.classList.contains("open")) {
      show(false);
      toggle.focus();
    }
  });
}
